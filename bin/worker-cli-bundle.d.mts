// Types of bin/worker-cli-bundle.mjs (plain JavaScript so the launcher loads it without type
// stripping).
export declare const ROOT: string;
export declare const CLI_DIR: string;
export declare const CLI_BUNDLE: string;
export declare const COMPILE_CACHE_DIR: string;
export declare const EXTRA_INPUTS: string[];
export declare function inputsHash(files: string[]): string;
export declare function writeStamp(files: string[], hash?: string): void;
export declare function bundleIsCurrent(): boolean;
