// ONNX models (docs/onnx.md): ls.onnx.load(bytes) imports an .onnx file as a Module whose forward
// runs lockstep's ops, so the same file and input give the same output bits here, in every browser
// and natively; fit, evaluate, save and hash work on it as on any model. Every argument is
// checked (check.js) first.
import * as check from './check.js';

export function makeOnnxApi(engine, { Tensor }, { nn }) {
  // An imported graph: a Module with the graph's inputs and outputs and a run() over all of them.
  class OnnxModel extends nn.Module {
    constructor(handle) {
      super(handle);
      this.signature = Object.freeze(engine.onnxSignature(handle));
    }
    // [{ name, dtype: 'float' | 'int64' | 'int32' | 'bool' | 'float64' | ..., shape: [number | string] |
    // null }]: a string dimension is a named (symbolic) one, as the batch of an export with dynamic
    // axes; a sequence or optional says so in dtype ('sequence of float'), and run() refuses it.
    get inputs() { return this.signature.inputs; }
    get outputs() { return this.signature.outputs; }
    get opset() { return this.signature.opset; }
    get producer() { return this.signature.producer; }
    // Runs the graph: inputs is { name: Tensor } (every input) or an array in inputs order (int64
    // tensors feed integer inputs, float32 0/1 bool ones, float32 float64 ones). Returns
    // { name: Tensor } with every output (bool outputs as float32 0/1, float64 ones as float32
    // rounded once); dispose them.
    run(inputs) {
      const names = this.inputs.map((i) => i.name);
      let list;
      if (Array.isArray(inputs)) {
        if (inputs.length !== names.length) {
          throw check.rangeError(`run: the model takes ${names.length} inputs (${names.join(', ')}), got ${inputs.length}`);
        }
        list = inputs;
      } else {
        const given = check.options(inputs, 'run', names);
        list = names.map((n) => {
          if (given[n] === undefined) throw check.typeError(`run: missing input '${n}' (the model's inputs: ${names.join(', ')})`);
          return given[n];
        });
      }
      const handles = list.map((t, i) => check.instance(t, Tensor, 'run', `input '${names[i]}'`).handle);
      const results = engine.onnxRun(this.handle, handles);
      const out = {};
      results.forEach(([handle], i) => { out[this.outputs[i].name] = new Tensor(handle); });
      return out;
    }
  }

  const onnx = {
    OnnxModel,
    // Imports the bytes of an .onnx file. options.seed: the Philox seed of the graph's Dropout
    // nodes (used only while the model trains). Throws an Error with kind 'unavailable' for an
    // operator, attribute or type lockstep does not compute exactly (naming the node), 'format'
    // for a malformed file.
    load(bytes, options) {
      const o = check.options(options, 'onnx.load', ['seed']);
      const seed = o.seed === undefined ? 0 : check.seed(o.seed, 'onnx.load', 'seed');
      return new OnnxModel(engine.loadOnnx(check.bytes(bytes, 'onnx.load'), seed));
    },
  };
  return { onnx };
}
