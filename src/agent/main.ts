// Entry point of the bundled single-file executable (scripts/build-worker.ts).
import { runCli } from './cli.ts';

void runCli();
