// Picks and instantiates one of the package's two WebAssembly builds. Both give the same bits;
// the SIMD128 build is faster and is chosen wherever the engine validates SIMD instructions.

// The smallest module that uses a SIMD instruction: (func (result v128) i32.const 0 i8x16.splat).
const SIMD_PROBE = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,  // magic, version
  0x01, 0x05, 0x01, 0x60, 0x00, 0x01, 0x7b,        // type: () -> v128
  0x03, 0x02, 0x01, 0x00,                          // one function of type 0
  0x0a, 0x08, 0x01, 0x06, 0x00, 0x41, 0x00, 0xfd, 0x0f, 0x0b,  // body
]);

export function simdSupported() {
  try {
    return typeof WebAssembly === 'object' && WebAssembly.validate(SIMD_PROBE);
  } catch {
    return false;
  }
}

const isNode = typeof process === 'object' && typeof process.versions?.node === 'string' &&
    typeof window === 'undefined';

async function readBytes(url) {
  if (isNode && url.protocol === 'file:') {
    const { readFile } = await import('node:fs/promises');
    return new Uint8Array(await readFile(url));
  }
  const response = await fetch(url);
  if (!response.ok) throw new Error(`lockstep: cannot load ${url}: HTTP ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}

// options.build: 'auto' (default), 'simd' or 'scalar'. options.baseUrl: where the .mjs/.wasm
// files are (default: next to this file).
export async function instantiate(options = {}) {
  const build = options.build ?? 'auto';
  if (!['auto', 'simd', 'scalar'].includes(build)) {
    throw new Error(`lockstep: build must be 'auto', 'simd' or 'scalar', got ${JSON.stringify(build)}`);
  }
  const flavour = build === 'auto' ? (simdSupported() ? 'simd' : 'scalar') : build;
  if (flavour === 'simd' && !simdSupported()) {
    throw new Error("lockstep: build 'simd' was asked for, but this WebAssembly engine has no SIMD128");
  }
  const base = new URL(options.baseUrl ?? './', import.meta.url);
  const factoryUrl = new URL(`lockstep-${flavour}.mjs`, base);
  const [{ default: createModule }, wasmBinary] =
      await Promise.all([import(factoryUrl.href), readBytes(new URL(`lockstep-${flavour}.wasm`, base))]);
  const engine = await createModule({
    wasmBinary,
    print: (text) => console.log(text),
    printErr: (text) => console.warn(text),
  });
  return { engine, flavour };
}
