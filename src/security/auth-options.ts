/**
 * The authentication keys (`server.auth.*`, `server.accessLog`, `consumer.credentials`): declared here
 * (schema, meaning, default) once; provider/server-options.ts and consumer/consumer-options.ts compose
 * them, and docs/configuration.md is generated from the comments here. `resolveServerAuth` checks them
 * together (ConfigError naming the key and the fix) and builds the authenticators.
 */
import { z } from 'zod';
import { ConfigError } from '../core/config-error.js';
import type { Authenticator } from './authenticator.js';
import { jwtAuthenticator, MIN_JWT_SECRET_BYTES } from './jwt-authenticator.js';
import { mtlsAuthenticator } from './mtls-authenticator.js';
import { MIN_TOKEN_LENGTH, tokenAuthenticator } from './token-authenticator.js';

/** One access rule as configuration writes it (filters/access-rules.ts). */
export const accessRuleSchema = z.strictObject({
  service: z.string().min(1).optional(),
  method: z.string().min(1).optional(),
  allow: z.array(z.string().min(1)).optional(),
  deny: z.array(z.string().min(1)).optional(),
});

/** A duration as configuration writes it: a number and a unit (ms, s, m, h, d). */
const DURATION = /^(\d+)(ms|s|m|h|d)$/;
const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Milliseconds of a duration key's value: a number of ms, or `<n><unit>` (ms, s, m, h, d). */
export function durationMs(value: number | string): number {
  if (typeof value === 'number') return value;
  const match = DURATION.exec(value)!;
  return Number(match[1]) * UNIT_MS[match[2]!]!;
}

export const serverAuthConfigSchema = z.strictObject({
  /** Shared-secret tokens, identity -> token (at least 16 characters): a caller sending a token is its identity. Default {}. */
  tokens: z.record(z.string(), z.string()),
  /** HMAC secret of signed tokens (JWT, HS256/384/512; at least 32 bytes); the caller is the token's `sub`, its `aud` must be the service. Default ''. */
  jwtSecret: z.string(),
  /** Public key of signed tokens (JWT, RS*, PS*, ES*, EdDSA): PEM text or a file path. Default ''. */
  jwtPublicKey: z.string(),
  /** Issuer (`iss`) signed tokens must name; '' accepts any. Default ''. */
  jwtIssuer: z.string(),
  /** Clock skew allowed on a signed token's `exp` and `nbf`, s. Default 0. */
  jwtClockToleranceS: z.number().int().nonnegative(),
  /** Longest lifetime a signed token may have (`exp - iat`, or `exp - now` without `iat`): ms, or a duration such as '15m', '12h', '7d'; 0 accepts any (a token with exp in 9999 too). Default 0. */
  jwtMaxLifetime: z.union([
    z.number().int().nonnegative(),
    z.string().regex(DURATION, 'a duration such as 15m, 12h or 7d'),
  ]),
  /** A client certificate verified by server.tls.ca (mutual TLS) identifies the caller by its common name. Default false. */
  mtls: z.boolean(),
  /** Access of a call no rule's allow list speaks for, once any authentication is on: 'allow' or 'deny' (required then). Default ''. */
  defaultAccess: z.enum(['', 'allow', 'deny']),
  /** Access rules: `{ service?, method?, allow?: [identities], deny?: [identities] }`, `*` for any; deny beats allow, the most specific allow lists decide (docs/security.md). Default []. */
  rules: z.array(accessRuleSchema),
  /** Publish a random token (new at every start) with the provider's registry records and refuse calls without it: only consumers that found the provider through a registry call it (docs/security.md). Default false. */
  registryToken: z.boolean(),
});

export type ServerAuthConfig = z.infer<typeof serverAuthConfigSchema>;

export const DEFAULT_SERVER_AUTH_CONFIG: ServerAuthConfig = {
  tokens: {},
  jwtSecret: '',
  jwtPublicKey: '',
  jwtIssuer: '',
  jwtClockToleranceS: 0,
  jwtMaxLifetime: 0,
  mtls: false,
  defaultAccess: '',
  rules: [],
  registryToken: false,
};

/** What the provider's security filters are built from. */
export interface ServerAuthOptions {
  readonly authenticators: readonly Authenticator[];
  readonly defaultAccess: 'allow' | 'deny';
  readonly rules: ServerAuthConfig['rules'];
}

/**
 * The authenticators and access rules of `server.auth`, or undefined when no authentication is on and
 * no rule is set. `mtlsAvailable`: the server asks for client certificates (`server.tls.requestCert`).
 */
export function resolveServerAuth(
  config: ServerAuthConfig,
  mtlsAvailable: boolean,
  readKey: (value: string) => string,
): ServerAuthOptions | undefined {
  const authenticators: Authenticator[] = [];
  const tokenIds = Object.keys(config.tokens);
  if (tokenIds.length > 0) {
    const short = tokenIds.find((id) => config.tokens[id]!.length < MIN_TOKEN_LENGTH);
    if (short !== undefined) {
      throw new ConfigError(
        `server.auth.tokens.${short}`,
        '(hidden)',
        `a token of at least ${MIN_TOKEN_LENGTH} characters (e.g. openssl rand -hex 32)`,
      );
    }
    authenticators.push(tokenAuthenticator(config.tokens));
  }
  if (config.jwtSecret !== '' && config.jwtPublicKey !== '') {
    throw new ConfigError(
      'server.auth.jwtPublicKey',
      '(set)',
      'either server.auth.jwtSecret (HMAC) or server.auth.jwtPublicKey (asymmetric), not both',
    );
  }
  const jwtCommon = {
    ...(config.jwtIssuer ? { issuer: config.jwtIssuer } : {}),
    clockToleranceS: config.jwtClockToleranceS,
    maxLifetimeMs: durationMs(config.jwtMaxLifetime),
  };
  if (config.jwtSecret !== '') {
    if (Buffer.byteLength(config.jwtSecret) < MIN_JWT_SECRET_BYTES) {
      throw new ConfigError(
        'server.auth.jwtSecret',
        '(hidden)',
        `an HMAC secret of at least ${MIN_JWT_SECRET_BYTES} bytes (e.g. openssl rand -hex 32)`,
      );
    }
    authenticators.push(jwtAuthenticator({ secret: config.jwtSecret, ...jwtCommon }));
  }
  if (config.jwtPublicKey !== '') {
    let pem: string;
    try {
      pem = readKey(config.jwtPublicKey);
      authenticators.push(jwtAuthenticator({ publicKey: pem, ...jwtCommon }));
    } catch (error) {
      throw new ConfigError(
        'server.auth.jwtPublicKey',
        config.jwtPublicKey.includes('-----BEGIN') ? '(PEM text)' : config.jwtPublicKey,
        'a public key (PEM text or the path of a readable PEM file)',
        { problem: (error as Error).message },
      );
    }
  }
  if (config.mtls) {
    if (!mtlsAvailable) {
      throw new ConfigError(
        'server.auth.mtls',
        true,
        'server.tls.requestCert: true and server.tls.ca set (client certificates are asked for only then)',
      );
    }
    authenticators.push(mtlsAuthenticator());
  }
  if (authenticators.length === 0) {
    if (config.rules.length > 0) {
      throw new ConfigError(
        'server.auth.rules',
        config.rules,
        'authentication configured too (server.auth.tokens, jwtSecret, jwtPublicKey or mtls): rules name authenticated callers',
      );
    }
    return undefined;
  }
  if (config.defaultAccess === '') {
    throw new ConfigError(
      'server.auth.defaultAccess',
      '',
      "'allow' (authenticated callers may call what no rule restricts) or 'deny' (only what a rule allows), stated explicitly once authentication is on",
    );
  }
  return { authenticators, defaultAccess: config.defaultAccess, rules: config.rules };
}
