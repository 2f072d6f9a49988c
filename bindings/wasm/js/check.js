// Argument checks shared by the whole API. The engine's functions take C++ ints, floats and
// doubles, and Embind converts whatever JavaScript gives them (0.7 becomes 0, '1e3' becomes 1000,
// true becomes 1), so every argument is checked here before it reaches the engine. Nothing is
// coerced. A value of the wrong type (or an unknown option) throws a TypeError, a value of the
// right type outside its range a RangeError; both say "lockstep: <where>: <name> must be
// <expected>, got <given>" and carry error.kind === 'argument', as the engine's argument errors do.

export const MAX_SAFE = Number.MAX_SAFE_INTEGER;  // 2^53 - 1: integers JavaScript holds exactly
export const INT32_MIN = -(2 ** 31);
export const INT32_MAX = 2 ** 31 - 1;

function make(Type, message) {
  const error = new Type(`lockstep: ${message}`);
  error.kind = 'argument';
  return error;
}
export const typeError = (message) => make(TypeError, message);
export const rangeError = (message) => make(RangeError, message);

const article = (name) => (/^[AEIOU]/.test(name) ? `an ${name}` : `a ${name}`);

// A short, unambiguous rendering of a value for messages: strings quoted, arrays shown when short.
export function describe(value) {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'undefined': return 'undefined';
    case 'number': return Object.is(value, -0) ? '-0' : String(value);
    case 'bigint': return `${value}n (a bigint)`;
    case 'string': return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}...` : value);
    case 'boolean': return String(value);
    case 'symbol': return value.toString();
    case 'function': return value.name ? `a function (${value.name})` : 'a function';
    default: break;
  }
  if (Array.isArray(value)) {
    const simple = value.length <= 8 && value.every((v) => v === null || (typeof v !== 'object' && typeof v !== 'function'));
    return simple ? `[${value.map(describe).join(', ')}]` : `an array of ${value.length} elements`;
  }
  const name = Object.getPrototypeOf(value)?.constructor?.name;
  return !name || name === 'Object' ? 'an object' : article(name);
}

const must = (where, name, expected, value) => `${where}: ${name} must be ${expected}, got ${describe(value)}`;

// An integer number in [min, max] (never a string, a boolean or a bigint).
export function integer(value, where, name, { min = -MAX_SAFE, max = MAX_SAFE, expected } = {}) {
  const text = expected ?? (max >= MAX_SAFE ? (min <= -MAX_SAFE ? 'an integer' : `an integer >= ${min}`)
    : max === INT32_MAX ? `an integer in [${min === INT32_MIN ? '-2^31' : min}, 2^31)` : `an integer in [${min}, ${max}]`);
  if (typeof value !== 'number') throw typeError(must(where, name, text, value));
  if (!Number.isInteger(value) || value < min || value > max) {
    const beyond = Number.isInteger(value) && value > max && max >= MAX_SAFE && expected === undefined;
    throw rangeError(must(where, name, beyond ? `${text} and < 2^53` : text, value));
  }
  return value;
}

// A seed: an integer in [0, 2^53).
export const seed = (value, where, name = 'seed') =>
  integer(value, where, name, { min: 0, max: MAX_SAFE, expected: 'an integer in [0, 2^53)' });

// A dimension index as the engine's int takes it (its range is checked against the tensor there).
export const dim = (value, where, name = 'dim') => integer(value, where, name, { min: INT32_MIN, max: INT32_MAX });

// A size the engine holds in an int: an integer in [min, 2^31).
export const size = (value, where, name, min = 1) => integer(value, where, name, { min, max: INT32_MAX });

function rangeText({ finite, min, max, minOpen, maxOpen }) {
  let text = finite ? 'a finite number' : 'a number';
  const lo = min !== undefined, hi = max !== undefined;
  if (lo && hi) text += ` in ${minOpen ? '(' : '['}${min}, ${max}${maxOpen ? ')' : ']'}`;
  else if (lo) text += ` ${minOpen ? '>' : '>='} ${min}`;
  else if (hi) text += ` ${maxOpen ? '<' : '<='} ${max}`;
  return text;
}

const inRange = (v, { min, max, minOpen, maxOpen }) =>
  (min === undefined || (minOpen ? v > min : v >= min)) && (max === undefined || (maxOpen ? v < max : v <= max));

// A number (finite unless finite: false) within optional bounds. float32: true also requires the
// value the engine will compute with, Math.fround(value), to be finite and within the bounds
// (1e-50 is > 0 but 0 in float32; 0.9999999999 is < 1 but 1 in float32).
export function number(value, where, name, { finite = true, min, max, minOpen = false, maxOpen = false,
                                              float32 = false } = {}) {
  const spec = { finite, min, max, minOpen, maxOpen };
  const text = rangeText(spec);
  if (typeof value !== 'number') throw typeError(must(where, name, text, value));
  if ((finite && !Number.isFinite(value)) || Number.isNaN(value) || !inRange(value, spec)) {
    throw rangeError(must(where, name, text, value));
  }
  if (float32) {
    const rounded = Math.fround(value);
    if ((finite && !Number.isFinite(rounded)) || !inRange(rounded, spec)) {
      throw rangeError(`${where}: ${name} must be ${text} in float32 (the engine computes in float32), got ${
        describe(value)}, which float32 rounds to ${describe(rounded)}`);
    }
  }
  return value;
}

export function boolean(value, where, name) {
  if (typeof value !== 'boolean') throw typeError(must(where, name, 'a boolean (true or false)', value));
  return value;
}

export function string(value, where, name) {
  if (typeof value !== 'string') throw typeError(must(where, name, 'a string', value));
  return value;
}

const alternatives = (allowed) => {
  const quoted = allowed.map((a) => `'${a}'`);
  return quoted.length === 1 ? quoted[0] : `${quoted.slice(0, -1).join(', ')} or ${quoted.at(-1)}`;
};

// One of the allowed strings.
export function oneOf(value, where, name, allowed) {
  const text = alternatives(allowed);
  if (typeof value !== 'string') throw typeError(must(where, name, text, value));
  if (!allowed.includes(value)) throw rangeError(must(where, name, text, value));
  return value;
}

export function func(value, where, name) {
  if (typeof value !== 'function') throw typeError(must(where, name, 'a function', value));
  return value;
}

export function signal(value, where, name = 'signal') {
  const ok = typeof AbortSignal === 'function'
    ? value instanceof AbortSignal
    : value !== null && typeof value === 'object' && typeof value.aborted === 'boolean';
  if (!ok) throw typeError(must(where, name, 'an AbortSignal', value));
  return value;
}

export function bytes(value, where, name = 'bytes') {
  if (!(value instanceof Uint8Array)) throw typeError(must(where, name, 'a Uint8Array', value));
  return value;
}

// An instance of Class (an engine wrapper: Tensor, Module, Optimizer, Dataset, ...).
export function instance(value, Class, where, name, typeName = Class.name) {
  if (!(value instanceof Class)) throw typeError(must(where, name, article(typeName), value));
  return value;
}

const isPlainObject = (value) => {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  // Object.prototype of this realm or of another one (an object made in a vm context or frame).
  return proto === null || proto === Object.prototype ||
      (Object.getPrototypeOf(proto) === null && proto.constructor?.name === 'Object');
};

// An options object (undefined gives {}): a plain object whose keys are all accepted. Keys whose
// value is undefined count as absent, as in the rest of JavaScript.
export function options(value, where, accepted) {
  if (value === undefined) return {};
  if (!isPlainObject(value)) {
    const example = accepted.length ? ` such as { ${accepted[0]}: ... }` : '';
    throw typeError(must(where, 'options', `an object${example}`, value));
  }
  for (const key of Object.keys(value)) {
    if (accepted.includes(key)) continue;
    const folded = key.replace(/[_-]/g, '').toLowerCase();
    const near = accepted.find((a) => a.toLowerCase() === folded);
    throw typeError(`unknown option '${key}' for ${where}; accepted: ${accepted.length ? accepted.join(', ') : 'none'}${
      near ? ` (did you mean '${near}'?)` : ''}`);
  }
  return value;
}

// No arguments at all (constructors such as new nn.ReLU()).
export function none(args, where) {
  if (args.length > 0) {
    throw typeError(`${where} takes no arguments, got ${args.length} (${args.map(describe).join(', ')})`);
  }
}

// A shape: an array of at most 8 integer dimensions in [0, 2^31).
export function shape(value, where, name = 'shape') {
  if (!Array.isArray(value)) throw typeError(must(where, name, 'an array of dimensions', value));
  if (value.length > 8) throw rangeError(`${where}: ${name} has ${value.length} dimensions, at most 8 are supported`);
  value.forEach((d, i) => {
    const message = `${where}: dimension ${i} must be an integer >= 0 and < 2^31, got ${describe(d)}`;
    if (typeof d !== 'number') throw typeError(message);
    if (!Number.isInteger(d) || d < 0 || d > INT32_MAX) throw rangeError(message);
  });
  return value;
}

// Dimensions given as arguments (zeros(2, 3)) or as one array (zeros([2, 3])).
export function dimsOf(args, where) {
  if (args.length >= 1 && Array.isArray(args[0])) {
    if (args.length > 1) {
      throw typeError(`${where} takes a shape array or dimensions as arguments, not both (got ${args.map(describe).join(', ')})`);
    }
    return args[0];
  }
  return args;
}

// A target shape for reshape/view: integers >= 0, one of which may be -1 (inferred).
export function targetShape(value, where) {
  if (!Array.isArray(value)) throw typeError(must(where, 'shape', 'an array of dimensions', value));
  if (value.length > 8) throw rangeError(`${where}: shape has ${value.length} dimensions, at most 8 are supported`);
  let inferred = -1;
  value.forEach((d, i) => {
    const message = `${where}: dimension ${i} must be an integer >= 0 and < 2^31, or -1 (inferred), got ${describe(d)}`;
    if (typeof d !== 'number') throw typeError(message);
    if (!Number.isInteger(d) || d < -1 || d > INT32_MAX) throw rangeError(message);
    if (d === -1) {
      if (inferred >= 0) throw rangeError(`${where}: only one dimension may be -1, got -1 at ${inferred} and ${i}`);
      inferred = i;
    }
  });
  return value;
}

const isNumberArray = (data) => ArrayBuffer.isView(data) && !(data instanceof DataView) &&
    !(typeof BigInt64Array === 'function' && (data instanceof BigInt64Array || data instanceof BigUint64Array));

// The elements of a typed array, an array of numbers or nested arrays, as { flat, shape }: every
// element must be a number (integers: a safe integer), nested arrays must be rectangular.
export function elements(data, where, { integers = false, name = 'data' } = {}) {
  const checkInteger = (x, at) => {
    if (!Number.isInteger(x) || Math.abs(x) > MAX_SAFE) {
      throw rangeError(`${where}: element ${at} is not an integer: ${describe(x)}`);
    }
  };
  if (isNumberArray(data)) {
    if (integers && !(data instanceof Int8Array || data instanceof Uint8Array || data instanceof Uint8ClampedArray ||
                      data instanceof Int16Array || data instanceof Uint16Array || data instanceof Int32Array ||
                      data instanceof Uint32Array)) {
      for (let i = 0; i < data.length; ++i) checkInteger(data[i], i);
    }
    return { flat: data, shape: [data.length] };
  }
  if (!Array.isArray(data)) {
    throw typeError(must(where, name, 'a typed array, an array of numbers or nested arrays of numbers', data));
  }
  const dims = [];
  for (let probe = data; Array.isArray(probe); probe = probe[0]) {
    dims.push(probe.length);
    if (probe.length === 0) break;
  }
  const at = (path, i) => (dims.length === 1 ? String(i) : `[${[...path, i].join('][')}]`);
  if (dims.length === 1) {  // a flat array is checked, not copied
    for (let i = 0; i < data.length; ++i) {
      const x = data[i];
      if (typeof x !== 'number') throw typeError(`${where}: element ${i} must be a number, got ${describe(x)}`);
      if (integers) checkInteger(x, i);
    }
    return { flat: data, shape: dims };
  }
  const flat = [];
  const walk = (node, depth, path) => {
    if (!Array.isArray(node) || node.length !== dims[depth]) {
      throw typeError(`${where}: nested array is ragged at index [${path.join('][')}]: expected an array of ${
        dims[depth]} elements, got ${describe(node)}`);
    }
    if (depth === dims.length - 1) {
      for (let i = 0; i < node.length; ++i) {
        const x = node[i];
        if (typeof x !== 'number') throw typeError(`${where}: element ${at(path, i)} must be a number, got ${describe(x)}`);
        if (integers) checkInteger(x, at(path, i));
        flat.push(x);
      }
      return;
    }
    for (let i = 0; i < node.length; ++i) walk(node[i], depth + 1, [...path, i]);
  };
  walk(data, 0, []);
  return { flat, shape: dims };
}
