/**
 * The autoscaler process: `node runtime/autoscaler/main.ts --config FILE [--address URL]`.
 * It connects to NATS (with the admin role's credentials on a secured cluster: it drains nodes),
 * runs the Autoscaler (autoscaler.ts) with the config's provider, and prints one line on stdout once
 * its first round is done:
 *
 *   ORRERY_READY {"role":"autoscaler","cluster":"…"}
 *
 * Its machine's transitions are published on the inspection stream like the GCS's and the raylets'.
 * SIGTERM or SIGINT stops it (exit 0); the nodes it launched keep running (`orrery down` stops
 * them). A bad flag or config is one line on stderr, exit 2.
 */
import { inspectionEnabled, InspectPublisher } from '../inspect/publisher.ts';
import { processMain } from '../process/main.ts';
import { ACCESS_USAGE, accessFlags, addressFlag, CONNECT_WAIT_FLAG, CONNECT_WAIT_USAGE, connectWaitFlag, FlagError, scanFlags, ACCESS_FLAGS } from '../process/flags.ts';
import { Autoscaler } from './autoscaler.ts';
import { loadAutoscalerConfig, type AutoscalerConfig } from './config.ts';
import { autoscalerGcs } from './gcs.ts';
import { providerFor } from './providers.ts';

const USAGE = `usage: orrery-autoscaler --config FILE [--address URL] [--connect-wait SECONDS]
  --config FILE: the cluster config (docs/autoscaling.md)
  --address URL (or $ORRERY_ADDRESS): the NATS server(s); launched nodes join the same address
${ACCESS_USAGE}
${CONNECT_WAIT_USAGE}`;

const main = processMain('autoscaler');
const flags = main.flags(() => {
  const { given, help } = scanFlags(process.argv.slice(2), new Set(['--config', '--address', CONNECT_WAIT_FLAG, ...ACCESS_FLAGS]));
  if (help) return { help, config: undefined as unknown as AutoscalerConfig, address: '', access: {}, connectWaitSeconds: 0 };
  const file = given.get('--config');
  if (file === undefined) throw new FlagError('--config', 'required: the cluster config file');
  let config: AutoscalerConfig;
  try {
    config = loadAutoscalerConfig(file);
  } catch (err) {
    throw new FlagError('--config', (err as Error).message);
  }
  return { help, config, address: addressFlag(given, process.env), access: accessFlags(given, process.env), connectWaitSeconds: connectWaitFlag(given, process.env) };
}, USAGE);

const bus = await main.connect(flags.address, `orrery-autoscaler-${flags.config.cluster}`, flags.access, flags.connectWaitSeconds);
let inspection: InspectPublisher | undefined;
if (inspectionEnabled(process.env)) {
  inspection = new InspectPublisher({ bus, cluster: flags.config.cluster, name: `autoscaler:${flags.config.cluster}`, log: main.say });
  await inspection.start();
}
const autoscaler = new Autoscaler({
  config: flags.config,
  gcs: autoscalerGcs(bus, { cluster: flags.config.cluster, address: flags.address }),
  provider: providerFor(flags.config, { address: flags.address }),
  address: flags.address,
  log: main.say,
  onActorSystem: (system) => void inspection?.add(system),
});
const first = autoscaler.nextRound();
autoscaler.start();
await first;
process.stdout.write(`ORRERY_READY ${JSON.stringify({ role: 'autoscaler', cluster: flags.config.cluster })}\n`);

main.onSignals(async () => {
  await autoscaler.stop();
  inspection?.stop();
  await bus.close().catch(() => undefined);
});
