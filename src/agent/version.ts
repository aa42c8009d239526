// The worker's version is the package's; bundled into the single-file executable at build time.
import pkg from '../../package.json' with { type: 'json' };

export const WORKER_VERSION: string = pkg.version;
