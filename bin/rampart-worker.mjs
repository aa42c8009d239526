#!/usr/bin/env node
// Launcher for `npx rampart-worker` in a checkout: Node 24 runs the TypeScript sources directly.
import { runCli } from '../src/worker/cli.ts';

await runCli();
