/** The bench client of the protobuf HTTP entry: the shared HTTP client, messages encoded with protobufjs. */
import { runClientMain } from '../../lib/client-main.js';
import { BENCH_SERVICE_NAME } from '../../lib/scenarios.js';
import { benchRoot } from '../callisto-protobuf/service.js';
import { createHttpPoster } from '../http-bare/http-client.js';

const SayRequest = benchRoot.lookupType('bench.SayRequest');
const SayReply = benchRoot.lookupType('bench.SayReply');
const GetUserRequest = benchRoot.lookupType('bench.GetUserRequest');
const User = benchRoot.lookupType('bench.User');
const TYPE = 'application/x-protobuf';

await runClientMain(async (port) => {
  const poster = createHttpPoster(port);
  return {
    async say(msg) {
      const answer = await poster.post(
        `/${BENCH_SERVICE_NAME}/say`,
        SayRequest.encode({ msg }).finish(),
        TYPE,
      );
      return (SayReply.decode(answer) as unknown as { value: string }).value;
    },
    async getUser(id) {
      const answer = await poster.post(
        `/${BENCH_SERVICE_NAME}/getUser`,
        GetUserRequest.encode({ id }).finish(),
        TYPE,
      );
      return User.toObject(User.decode(answer)) as never;
    },
    close: () => poster.close(),
  };
});
