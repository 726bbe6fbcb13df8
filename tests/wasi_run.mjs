// tests/wasi_run.mjs — run a wasm32-wasi command module under node (WASI preview1).
//   node tests/wasi_run.mjs program.wasm [args...]
// The module sees its arguments, the environment (e.g. ACCEL_TEST_BACKEND) and the current directory
// (preopened as "."); the exit code of the module becomes the exit code of node.
import { readFile } from 'node:fs/promises';
import { WASI } from 'node:wasi';
import { basename } from 'node:path';

const [file, ...args] = process.argv.slice(2);
if (!file) {
    console.error('usage: node tests/wasi_run.mjs program.wasm [args...]');
    process.exit(2);
}
const wasi = new WASI({
    version: 'preview1',
    args: [basename(file), ...args],
    env: process.env,
    preopens: { '.': process.cwd() },
    returnOnExit: true,
});
const module = await WebAssembly.compile(await readFile(file));
const instance = await WebAssembly.instantiate(module, wasi.getImportObject
    ? wasi.getImportObject() : { wasi_snapshot_preview1: wasi.wasiImport });
try {
    process.exitCode = wasi.start(instance) ?? 0;
} catch (e) {                      // a trap (abort, unreachable, out of bounds): report it like SIGABRT
    console.error(`wasi_run: ${file}: ${e && e.stack ? e.stack : e}`);
    process.exitCode = 134;
}
