/**
 * The echo method every provided service answers (Dubbo's `EchoService.$echo`): a caller checks that a
 * service answers on a provider through the whole stack (routing, auth, access rules, the provider's
 * filters) without calling business code. `$` cannot begin a method a definition declares.
 */
export const ECHO_METHOD = '$echo';
