// Deterministic freeing of engine objects. Each wrapper owns one Embind handle: dispose() (or
// `using`, through Symbol.dispose) frees it at once. scope(fn) disposes every wrapper created
// inside fn except what fn returns. A FinalizationRegistry frees handles that were forgotten, but
// only when the garbage collector gets to them: do not rely on it in loops.

import * as check from './check.js';

const scopes = [];
const finalizer = typeof FinalizationRegistry === 'function'
  ? new FinalizationRegistry((handle) => { if (!handle.isDeleted()) handle.delete(); })
  : null;

export class Owned {
  #handle;
  #kind;
  constructor(handle, kind) {
    this.#handle = handle;
    this.#kind = kind;
    finalizer?.register(this, handle, this);
    scopes.at(-1)?.add(this);
  }
  // The Embind handle; throws (an Error of kind 'state') once disposed.
  get handle() {
    if (this.#handle === null) {
      const error = new Error(`lockstep: this ${this.#kind} was disposed`);
      error.kind = 'state';
      throw error;
    }
    return this.#handle;
  }
  get disposed() { return this.#handle === null; }
  dispose() {
    if (this.#handle === null) return;
    finalizer?.unregister(this);
    this.#handle.delete();
    this.#handle = null;
  }
}
if (typeof Symbol.dispose === 'symbol') {
  Owned.prototype[Symbol.dispose] = function dispose() { this.dispose(); };
}

function collectKept(value, kept) {
  if (value instanceof Owned) kept.add(value);
  else if (Array.isArray(value)) value.forEach((v) => collectKept(v, kept));
  else if (value && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    Object.values(value).forEach((v) => collectKept(v, kept));
  }
}

function endScope(created, result) {
  const kept = new Set();
  collectKept(result, kept);
  for (const owned of created) if (!kept.has(owned)) owned.dispose();
  kept.forEach((owned) => scopes.at(-1)?.add(owned));  // what survives belongs to the outer scope
}

// Runs fn; disposes what it created except its result (a wrapper, or arrays/objects of them).
// fn must be synchronous: what an async body creates after its first await would escape.
export function scope(fn) {
  check.func(fn, 'scope', 'fn');
  const created = new Set();
  scopes.push(created);
  let result;
  try {
    result = fn();
  } catch (error) {
    scopes.pop();
    endScope(created, undefined);
    throw error;
  }
  scopes.pop();
  if (result && typeof result.then === 'function') {
    endScope(created, undefined);
    throw check.typeError('scope() takes a synchronous function; await inside it would let tensors escape');
  }
  endScope(created, result);
  return result;
}
