// Types of the npm package `lockstep`.
//
// Every argument is checked before it reaches the engine and nothing is coerced: a value of the
// wrong type (a string for a number, 0.7 for an integer dimension, a string for an options object)
// or an unknown option name throws a TypeError, a value of the right type out of its range a
// RangeError; their messages start with "lockstep: " and name the function, the argument or
// option, what was expected and what was given, and they carry kind 'argument'. Errors from the
// engine are plain Errors with a kind (see ErrorKind). After any of them the module keeps working.

/** What an error from lockstep is about (docs/errors.md). */
export type ErrorKind = 'argument' | 'format' | 'io' | 'state' | 'unavailable' | 'resource' | 'cancelled' | 'internal';

/** An error thrown by lockstep: an Error (engine), TypeError or RangeError (argument checks) with its kind. */
export interface LockstepError extends Error {
  kind: ErrorKind;
}

/**
 * Which WebAssembly build to load: all give identical bits. 'threads' (SIMD128, kernels split
 * over Web Workers) is the fastest, then 'simd', then 'scalar'.
 */
export type Build = 'auto' | 'threads' | 'simd' | 'scalar';

export interface LoadOptions {
  /**
   * Default 'auto': 'threads' where memory can be shared with workers (Node; a cross-origin
   * isolated page), else SIMD128 where the engine validates it, else scalar.
   */
  build?: Build;
  /** Kernel threads of the threads build, 1 to 64 (default: one per core, at most 8); 1 for the others. */
  threads?: number;
  /** Where lockstep-{threads,simd,scalar}.{mjs,wasm} are served; default: next to index.js. */
  baseUrl?: string | URL;
  /**
   * For an engine in a browser's Web Worker: gives `count` ports to the threads build's workers,
   * which the page started with startWorkerPorts and transferred here, so no worker is started
   * inside a worker (Firefox can block for good there). Without it the loader starts them itself.
   */
  workerPorts?: (count: number) => Promise<MessagePort[]>;
}

/** Loads and instantiates the engine. */
export function load(options?: LoadOptions): Promise<Lockstep>;
/**
 * On a page: starts `count` workers of the threads build (from baseUrl, default next to index.js)
 * and gives one MessagePort per worker, to transfer to the engine's Web Worker for its load({ workerPorts }).
 */
export function startWorkerPorts(count: number, options?: { baseUrl?: string | URL }): Promise<MessagePort[]>;
/** Whether this JavaScript engine can run the SIMD128 build. */
export function simdSupported(): boolean;
/** Whether the threads build can run here (SIMD128, shared memory, workers; a page must be cross-origin isolated). */
export function threadsSupported(): boolean;
/** Why the threads build cannot run here, or null where it can. */
export function threadsUnavailableReason(): string | null;
/** Runs fn and disposes every engine object it created except those in its (synchronous) result. */
export function scope<T>(fn: () => T): T;

/** An engine object with a deterministic lifetime: dispose() frees it at once. */
export declare class Owned {
  readonly disposed: boolean;
  dispose(): void;
  [Symbol.dispose](): void;
}

export type Shape = number[];
export type DType = 'float32' | 'int64' | 'int32';
export type NestedNumbers = number[] | NestedNumbers[];
/** Typed arrays of numbers (not BigInt64Array) and arrays of numbers. */
export type NumberArray = number[] | Int8Array | Uint8Array | Uint8ClampedArray | Int16Array | Uint16Array | Int32Array |
    Uint32Array | Float32Array | Float64Array;
/** An int64 tensor, or class indices (integers) as an array or typed array. */
export type Labels = Tensor | NumberArray;

export interface Tensor extends Owned {
  readonly shape: Shape;
  readonly dtype: DType;
  readonly numel: number;
  readonly ndim: number;
  /** A copy of the elements: Float32Array for float32 tensors, Int32Array for integer tensors. */
  toArray(): Float32Array | Int32Array;
  /** The value of a one-element float tensor. */
  item(): number;
  toString(): string;

  requiresGrad: boolean;
  requiresGrad_(on?: boolean): this;
  /** The accumulated gradient as a new tensor (dispose it), or null. */
  readonly grad: Tensor | null;
  zeroGrad(): void;
  /**
   * Backpropagates from this (one-element) tensor. The graph's saved results are freed unless
   * retainGraph is true: a second backward() through a freed graph throws an Error of kind 'state'.
   */
  backward(options?: { retainGraph?: boolean }): void;
  detach(): Tensor;
  clone(): Tensor;
  copy_(other: Tensor): this;

  /** Elementwise, broadcasting; a number must be finite (and finite as float32). */
  add(other: Tensor | number): Tensor;
  sub(other: Tensor | number): Tensor;
  mul(other: Tensor | number): Tensor;
  div(other: Tensor | number): Tensor;
  /** The remainder of this / other with this tensor's sign (torch.fmod), exact. */
  fmod(other: Tensor | number): Tensor;
  /** The remainder of this / other with other's sign (torch.remainder, Python's %). */
  remainder(other: Tensor | number): Tensor;
  maximum(other: Tensor): Tensor;
  minimum(other: Tensor): Tensor;
  matmul(other: Tensor): Tensor;
  /**
   * Correctly rounded powers for the integer exponents -4 to 4 and for 0.5 (a square root); any other
   * finite exponent (2.9, 5) throws an Error of kind 'argument': use exp(y * log(x)) there.
   */
  pow(exponent: number): Tensor;
  neg(): Tensor;
  relu(): Tensor;
  gelu(approximate?: 'none' | 'tanh'): Tensor;
  tanh(): Tensor;
  /** Rounding to an integer (exact, not differentiable): floor, ceil, and round (ties to even). */
  floor(): Tensor;
  ceil(): Tensor;
  round(): Tensor;
  /** Trigonometric and hyperbolic functions and their inverses (radians), correctly rounded. */
  sin(): Tensor;
  cos(): Tensor;
  tan(): Tensor;
  asin(): Tensor;
  acos(): Tensor;
  atan(): Tensor;
  sinh(): Tensor;
  cosh(): Tensor;
  asinh(): Tensor;
  acosh(): Tensor;
  atanh(): Tensor;
  sigmoid(): Tensor;
  exp(): Tensor;
  log(): Tensor;
  sqrt(): Tensor;
  /** Dimensions (dim, dim0, startDim, ...) are integers; negative ones count from the end. */
  sum(dim?: number, keepdim?: boolean): Tensor;
  mean(dim?: number, keepdim?: boolean): Tensor;
  /** The maximum over dim; throws for an empty dimension. */
  max(dim: number, keepdim?: boolean): Tensor;
  argmax(dim: number, keepdim?: boolean): Tensor;
  softmax(dim?: number): Tensor;
  logSoftmax(dim?: number): Tensor;
  /** The new shape (one dimension may be -1): a view where the strides allow one, else a copy. */
  reshape(...shape: number[] | [Shape]): Tensor;
  /**
   * A view of the same memory with the new shape (one dimension may be -1); throws an Error of kind
   * 'argument' where the strides do not allow one (after a transpose, say): use reshape() there.
   */
  view(...shape: number[] | [Shape]): Tensor;
  transpose(dim0: number, dim1: number): Tensor;
  permute(...order: number[] | [number[]]): Tensor;
  flatten(startDim?: number, endDim?: number): Tensor;
  squeeze(dim: number): Tensor;
  unsqueeze(dim: number): Tensor;
  /** Elements [start, end) of dim, every step-th (>= 1), as a view; negative start/end count from the end. */
  slice(dim: number, start: number, end: number, step?: number): Tensor;
  contiguous(): Tensor;
}

/** A named Philox stream under a seed: draws depend only on (seed, name, what was drawn before). */
export interface Generator extends Owned {
  readonly offset: number;
}

/** Either generator, or seed (with stream, default 'randn'), or neither (the default generator). */
export interface RandomOptions {
  generator?: Generator;
  /** An integer in [0, 2^53). */
  seed?: number;
  stream?: string;
}

export interface GeneratorOption {
  /** Default: the "init" stream of manualSeed's seed. */
  generator?: Generator;
}

export interface Module extends Owned {
  forward(input: Tensor): Tensor;
  readonly name: string;
  readonly training: boolean;
  train(on?: boolean): this;
  eval(): this;
  zeroGrad(): void;
  namedParameters(): [string, Tensor][];
  parameters(): Tensor[];
  stateDict(): [string, Tensor][];
  /** The canonical safetensors checkpoint; its SHA-256 is hash(). */
  save(): Uint8Array;
  load(bytes: Uint8Array): this;
  hash(): string;
}

export interface Sequential extends Module {
  add(module: Module): this;
}

/** A class of the engine, for instanceof checks (engine objects are made by the API, not new). */
export type ClassOf<T> = Function & { prototype: T };

export interface RecurrentOptions extends GeneratorOption {
  numLayers?: number;
  bias?: boolean;
  batchFirst?: boolean;
  bidirectional?: boolean;
}

export interface Recurrent extends Module {
  forwardWithState(input: Tensor, h0?: Tensor | null, c0?: Tensor | null): [Tensor, Tensor, Tensor | null];
}

export interface Nn {
  Module: ClassOf<Module>;
  Sequential: new (...modules: Module[]) => Sequential;
  Linear: new (inFeatures: number, outFeatures: number, options?: GeneratorOption & { bias?: boolean }) => Module;
  Conv2d: new (inChannels: number, outChannels: number, kernelSize: number,
               options?: GeneratorOption & { stride?: number; padding?: number; dilation?: number; groups?: number;
                                             bias?: boolean }) => Module;
  /** PyTorch's recurrent layers: forward gives the output; forwardWithState [output, hN, cN (LSTM) or null]. */
  RNN: new (inputSize: number, hiddenSize: number, options?: RecurrentOptions & { nonlinearity?: 'tanh' | 'relu' }) => Recurrent;
  LSTM: new (inputSize: number, hiddenSize: number, options?: RecurrentOptions) => Recurrent;
  GRU: new (inputSize: number, hiddenSize: number, options?: RecurrentOptions) => Recurrent;
  /** PyTorch's ConvTranspose2d: weight [in, out / groups, k, k]. */
  ConvTranspose2d: new (inChannels: number, outChannels: number, kernelSize: number,
                        options?: GeneratorOption & { stride?: number; padding?: number; outputPadding?: number;
                                                      groups?: number; bias?: boolean; dilation?: number }) => Module;
  /** ceilMode: PyTorch's ceil_mode (the last window starts inside the input or its left padding). */
  MaxPool2d: new (kernelSize: number, options?: { stride?: number; padding?: number; ceilMode?: boolean }) => Module;
  /** PyTorch's windows, each the mean of its elements; outputSize a size or [h, w] (null: the input's). */
  AdaptiveAvgPool2d: new (outputSize: number | [number | null, number | null]) => Module;
  /** [N, C, ...] -> [N, groups, C / groups, ...] transposed to [N, C / groups, groups, ...]. */
  ChannelShuffle: new (groups: number) => Module;
  /** min(max(x, 0), 6); gradient 0 at and beyond 0 and 6 (PyTorch's). */
  ReLU6: new () => Module;
  /** min(max(x, minVal), maxVal) (defaults -1, 1); gradient 0 at and beyond the bounds. */
  Hardtanh: new (minVal?: number, maxVal?: number) => Module;
  /** x * sigmoid(x). */
  SiLU: new () => Module;
  /** min(max(x + 3, 0), 6) / 6. */
  Hardsigmoid: new () => Module;
  /** x * min(max(x + 3, 0), 6) / 6. */
  Hardswish: new () => Module;
  /**
   * torchvision's StochasticDepth: in training, each sample (mode 'row') or the whole batch
   * ('batch') is zeroed with probability p in [0, 1] and the rest scaled by 1 / (1 - p); identity
   * in eval mode. Masks come from options.generator or, as a Dropout's, from the next stream
   * 'dropout/' + k.
   */
  StochasticDepth: new (p: number, mode: 'row' | 'batch', options?: { generator?: Generator }) => Module;
  /**
   * Points every Dropout and StochasticDepth of the model at the stream 'dropout/' + its module
   * path under seed (offset 0): the masks Python's from_torch_module draws, so a model exported
   * from Python goes on training with the converted module's masks.
   */
  seedDropoutStreams(model: Module, seed: number): void;
  AvgPool2d: new (kernelSize: number, options?: { stride?: number; padding?: number }) => Module;
  ReLU: new () => Module;
  Tanh: new () => Module;
  Sigmoid: new () => Module;
  GELU: new (options?: { approximate?: 'none' | 'tanh' }) => Module;
  Softmax: new (dim?: number) => Module;
  LogSoftmax: new (dim?: number) => Module;
  Flatten: new (startDim?: number, endDim?: number) => Module;
  /**
   * Inverted dropout, p in [0, 1) (default 0.5). Masks come from options.generator or else from a
   * stream of the layer's own: the k-th Dropout made without a generator since load() or the last
   * manualSeed(seed) draws from new Generator(seed, 'dropout/' + k) (k = 0, 1, ...), so two layers
   * draw different masks and the same program after manualSeed(seed) draws the same ones again.
   */
  Dropout: new (p?: number, options?: { generator?: Generator }) => Module;
  /** normalizedShape: the size of the last dimension; eps >= 0 (default 1e-5). */
  LayerNorm: new (normalizedShape: number, options?: { eps?: number; elementwiseAffine?: boolean; bias?: boolean }) => Module;
  Embedding: new (numEmbeddings: number, embeddingDim: number, options?: GeneratorOption) => Module;
  functional: {
    /** targets: class indices (integers); labelSmoothing in [0, 1] (default 0), ignoreIndex default -100. */
    crossEntropy(logits: Tensor, targets: Labels, options?: { labelSmoothing?: number; ignoreIndex?: number }): Tensor;
    nllLoss(logProbs: Tensor, targets: Labels): Tensor;
    mseLoss(input: Tensor, target: Tensor): Tensor;
    /** The mean over several dimensions (an empty array: every element). */
    mean(input: Tensor, dims: number[], keepdim?: boolean): Tensor;
    /** Tensors joined along an existing dimension (default 0). */
    cat(tensors: Tensor[], dim?: number): Tensor;
    channelShuffle(input: Tensor, groups: number): Tensor;
    adaptiveAvgPool2d(input: Tensor, outputSize: number | [number | null, number | null]): Tensor;
    maxPool2d(input: Tensor, kernelSize: number, options?: { stride?: number; padding?: number; ceilMode?: boolean }): Tensor;
    hardtanh(input: Tensor, minVal?: number, maxVal?: number): Tensor;
    relu6(input: Tensor): Tensor;
    silu(input: Tensor): Tensor;
    hardsigmoid(input: Tensor): Tensor;
    hardswish(input: Tensor): Tensor;
  };
}

export type ModelName = 'lenet5' | 'mlp';

export interface Models {
  readonly names: ModelName[];
  create(arch: ModelName, options?: { seed?: number }): Module;
  /** LeNet-5 for [N, 1, 28, 28] images, the MNIST reference model. */
  lenet5(options?: { seed?: number }): Module;
  /** Flatten, Linear(784, 128), ReLU, Linear(128, 10). */
  mlp(options?: { seed?: number }): Module;
  /** A checkpoint as a model: options.arch, or the first reference architecture it fits. */
  fromCheckpoint(bytes: Uint8Array, options?: { arch?: ModelName }): Module;
}

export interface Optimizer extends Owned {
  step(): void;
  zeroGrad(): void;
  /** The learning rate; set it to a finite number >= 0. */
  lr: number;
  readonly stepCount: number;
}

export type Parameters = Module | Tensor[];

/** PyTorch's checks: lr, momentum, weightDecay and eps finite and >= 0, dampening finite, betas in [0, 1). */
export interface Optim {
  Optimizer: ClassOf<Optimizer>;
  /** Defaults: lr 0.01, momentum 0, dampening 0, weightDecay 0, nesterov false (needs momentum > 0, dampening 0). */
  SGD: new (params: Parameters, options?: { lr?: number; momentum?: number; dampening?: number; weightDecay?: number;
                                            nesterov?: boolean }) => Optimizer;
  /** Defaults: lr 1e-3, betas [0.9, 0.999], eps 1e-8, weightDecay 0 (added to the gradient). */
  Adam: new (params: Parameters, options?: { lr?: number; betas?: [number, number]; eps?: number;
                                             weightDecay?: number }) => Optimizer;
  /** As Adam, with decoupled weightDecay (default 0.01). */
  AdamW: new (params: Parameters, options?: { lr?: number; betas?: [number, number]; eps?: number;
                                              weightDecay?: number }) => Optimizer;
}

export interface DatasetClass extends ClassOf<Dataset> {
  /**
   * IDX image and label files (MNIST's format); a byte pixel p becomes p / 255 in float32. normalize
   * applies MNIST's normalisation as the reference run does, in float32:
   * x = (x + (-0.1307f)) * (1.0f / 0.3081f), the scale being the float32 quotient 3.2456996
   * (bits 0x404FB98B): a multiplication, not a division of every pixel by 0.3081.
   */
  fromIdx(images: Uint8Array, labels: Uint8Array, options?: { normalize?: boolean }): Dataset;
  fromTensors(inputs: Tensor, labels: Tensor): Dataset;
}

export interface Dataset extends Owned {
  readonly size: number;
  readonly inputs: Tensor;
  readonly labels: Tensor;
  /** Examples [start, start + count) as a new data set (count >= 1). */
  slice(start: number, count: number): Dataset;
}

export interface Progress {
  /** The step just run, counted over the whole run (a resumed fit continues the count). */
  step: number;
  totalSteps: number;
  epoch: number;
  loss: number;
  stepsPerSecond: number;
  etaSeconds: number;
}

export interface FitOptions {
  /** An integer >= 1 (default 1). */
  epochs?: number;
  /** An integer >= 1 (default 100); the last partial batch of an epoch is dropped. */
  batchSize?: number;
  /** Seeds the shuffle order of every epoch: an integer in [0, 2^53) (default 0). */
  seed?: number;
  /** An integer >= 0: the run has min(epochs * steps per epoch, maxSteps) steps. */
  maxSteps?: number;
  onProgress?: (progress: Progress) => void;
  /** Stops training before the next step; fit rejects with signal.reason. */
  signal?: AbortSignal;
  /** Steps between yields to the event loop (default 10). */
  yieldEvery?: number;
  /**
   * Steps between training states (an integer >= 1): after every checkpointEvery-th step of the run,
   * onCheckpoint(bytes, step) receives the full training state (model, optimizer moments, position,
   * dropout offsets, and the run's identity). Each needs the other.
   */
  checkpointEvery?: number;
  /** Receives the training states; fit waits for a returned promise before it goes on. */
  onCheckpoint?: (bytes: Uint8Array, step: number) => void | Promise<void>;
  /**
   * A training state from onCheckpoint: the run continues from its step, with the same seed, data,
   * model architecture, batch size and optimizer (else an Error of kind 'state'), and ends on
   * the same model hash as an uninterrupted fit. Give a model and optimizer made as the first run's
   * were; epochs and maxSteps count from the start of the run.
   */
  resume?: Uint8Array;
  /**
   * false (default): a NaN or infinite loss stops fit with an Error of kind 'state', before that
   * step's update; true trains on.
   */
  allowNonFinite?: boolean;
  /**
   * Records a receipt of the run (docs/verifiable-training.md in the repository): true, or
   * { every } steps between the training states kept beside it (default: about ten over the run).
   * verifyRun checks it, given a model and optimizer made as this run's were. Not with resume.
   */
  receipt?: boolean | { every?: number };
}

export interface FitResult {
  /** The run's step count at the end (its total steps). */
  steps: number;
  /** The step this call started from: 0, or the step of the resumed training state. */
  resumedFrom: number;
  /** The losses of the steps this call ran: steps - resumedFrom of them (step resumedFrom + 1 first). */
  losses: number[];
  /** The last of losses, or NaN when this call ran no step. */
  finalLoss: number;
  /** With options.receipt. */
  receipt?: Receipt;
}

export interface EvalOptions {
  /** An integer >= 1 (default 100). */
  batchSize?: number;
  /** Evaluate only the first limit examples (an integer >= 1; default all). */
  limit?: number;
}

export interface EvalResult {
  examples: number;
  correct: number;
  accuracy: number;
  /** SHA-256 of every logit in data-set order, little-endian float32. */
  logitsHash: string;
}

export interface MnistRunOptions {
  train: Dataset;
  test: Dataset;
  /** Default 20. */
  epochs?: number;
  /** Seeds the model's initialisation and the shuffle order (default 2). */
  seed?: number;
  /** Adam's learning rate (default 1e-3). */
  lr?: number;
  /** Default 100. */
  batchSize?: number;
  maxSteps?: number;
  /** Evaluate only the first maxTest test examples. */
  maxTest?: number;
  onProgress?: (progress: Progress) => void;
  signal?: AbortSignal;
  yieldEvery?: number;
  /** As fit()'s. */
  checkpointEvery?: number;
  onCheckpoint?: (bytes: Uint8Array, step: number) => void | Promise<void>;
  resume?: Uint8Array;
  allowNonFinite?: boolean;
  /**
   * Records a receipt of the run (docs/verifiable-training.md in the repository): true, or
   * { every } steps between the training states kept beside it (default: about ten over the run).
   * The same bytes as the native `lockstep train mnist --receipt run.receipt` of the same run.
   */
  receipt?: boolean | { every?: number };
}

/** A receipt and the training states kept beside it, named as the receipt names them. */
export interface Receipt {
  text: string;
  states: Record<string, Uint8Array>;
}

export interface VerifyOptions {
  /** The training set the run used (the MNIST run's: Dataset.fromIdx(..., { normalize: true })). */
  train: Dataset;
  /** The states, when the receipt is given as text. */
  states?: Record<string, Uint8Array>;
  /** Start from this state (a name among states) instead of the receipt's nearest. */
  checkpoint?: string;
  /** Check steps first..last. */
  steps?: [number, number];
  /** Check this many steps drawn by seed (the native --sample K --seed S draw). */
  sample?: number;
  seed?: number;
  /** Each checked step's verdict, as it comes. */
  onStep?: (step: number, ok: boolean) => void;
  /**
   * A fit() receipt's model and optimizer, made as the run's were (the same architecture and seed;
   * the same optimizer and options over the same parameters): the receipt checks their
   * description, and the kept states are loaded into them.
   */
  model?: Module;
  optimizer?: Optimizer;
}

export interface VerifyResult {
  verified: boolean;
  checkedSteps: number;
  executedSteps: number;
  /** 0 when every checked step matched. */
  firstMismatch: number;
  mismatch: string;
  /** The report, a line at a time (as the native verify-run prints it). */
  report: string[];
}

export interface MnistRunResult {
  initialHash: string;
  trainedHash: string;
  logitsHash: string;
  testAccuracy: number;
  testExamples: number;
  steps: number;
  resumedFrom: number;
  finalLoss: number;
  /** The losses of the steps this call ran (see FitResult). */
  losses: number[];
  /** The trained model: dispose it when done. */
  model: Module;
  /** With options.receipt. */
  receipt?: Receipt;
}

export type GptPreset = 'small' | 'tiny';

export interface GptOptions {
  /** 'small': 4 layers, 4 heads, 128 channels, block 64 (default); 'tiny': 2, 2, 32, block 16. */
  preset?: GptPreset;
  /** An integer in [0, 2^53) (default 1). */
  seed?: number;
  /** In [0, 1); default: the preset's. */
  dropout?: number;
}

/** Integers: steps, evalInterval, evalIters, warmupSteps, decaySteps >= 0; batchSize, gradAccum >= 1. lr, minLr, weightDecay >= 0. */
export interface GptTrainOptions extends GptOptions {
  steps?: number;
  evalInterval?: number;
  evalIters?: number;
  batchSize?: number;
  gradAccum?: number;
  lr?: number;
  minLr?: number;
  warmupSteps?: number;
  decaySteps?: number;
  weightDecay?: number;
  /** false (default): a NaN or infinite loss stops training with an Error of kind 'state'. */
  allowNonFinite?: boolean;
  onProgress?: (progress: { step: number; totalSteps: number; loss: number; lr: number; stepsPerSecond: number;
                            etaSeconds: number }) => void;
  signal?: AbortSignal;
  /** Steps between yields to the event loop (default 1). */
  yieldEvery?: number;
}

export interface GptTrainResult {
  initialHash: string;
  trainedHash: string;
  losses: number[];
  estimates: { train: number; val: number }[];
  /** The trained model: dispose it when done. */
  model: Module;
  /** With options.receipt. */
  receipt?: Receipt;
}

export interface CharCorpus extends Owned {
  readonly vocabSize: number;
  readonly vocab: string;
  readonly trainSize: number;
  readonly valSize: number;
  encode(text: string): number[];
  decode(ids: NumberArray): string;
}

export interface GptSampleOptions {
  /** An integer >= 0 (default 200). */
  maxNewTokens?: number;
  /** A finite number > 0 (default 0.8); one so small that the logits overflow throws an Error of kind 'state'. */
  temperature?: number;
  /** An integer >= 0 (default 20; 0: all tokens). */
  topK?: number;
  /** An integer in [0, 2^53) (default 1). */
  seed?: number;
}

export interface Gpt {
  /** trainFraction in (0, 1) (default 0.9). */
  CharCorpus: new (text: string, options?: { trainFraction?: number }) => CharCorpus;
  /** nanoGPT's architecture; forward takes int64 token ids [B, T] and gives logits [B, T, vocab]. */
  model(corpus: CharCorpus, options?: GptOptions): Module;
  /** Trains as `lockstep train gpt` does: the same hashes. */
  train(corpus: CharCorpus, options?: GptTrainOptions): Promise<GptTrainResult>;
  /** Continues prompt (a non-empty string of the corpus's characters; default '\n'). */
  sample(model: Module, corpus: CharCorpus, prompt?: string, options?: GptSampleOptions): string;
}

export interface Info {
  version: string;
  contractVersion: number;
  simdTarget: string;
  platform: string;
  build: 'threads' | 'simd' | 'scalar';
  /** The kernel threads in use (1 for the single-thread builds). */
  threads: number;
  /** Why load() with build 'auto' did not take the threads build; null when it did or a build was named. */
  threadsUnavailable: string | null;
}

/** A graph input or output as the .onnx file declares it; a string dimension is a named one. */
export interface OnnxIo {
  readonly name: string;
  readonly dtype: 'float' | 'int64' | 'int32' | 'bool';
  readonly shape: ReadonlyArray<number | string> | null;
}

/** An imported ONNX graph: a Module (forward, fit, evaluate, save, hash) with run() over every input. */
export interface OnnxModel extends Module {
  readonly inputs: ReadonlyArray<OnnxIo>;
  readonly outputs: ReadonlyArray<OnnxIo>;
  readonly opset: number;
  readonly producer: string;
  /** Every input by name (or an array in inputs order); every output by name. Dispose them. */
  run(inputs: Record<string, Tensor> | Tensor[]): Record<string, Tensor>;
}

export interface Onnx {
  OnnxModel: ClassOf<OnnxModel>;
  /**
   * Imports the bytes of an .onnx file (docs/onnx.md in the repository). seed: the Philox seed of
   * its Dropout nodes, used only while it trains. Throws an Error of kind 'unavailable' naming the
   * node for an operator, attribute or type lockstep does not compute exactly, 'format' for a
   * malformed file.
   */
  load(bytes: Uint8Array, options?: { seed?: number }): OnnxModel;
}

export interface Lockstep {
  readonly info: Info;
  Tensor: ClassOf<Tensor>;
  Generator: new (seed: number, name?: string) => Generator;
  /**
   * data: a typed array, an array of numbers or rectangular nested arrays of numbers (strings,
   * booleans and bigints are refused, never converted); int64 elements must be integers.
   */
  tensor(data: NumberArray | NestedNumbers, shape?: Shape, options?: { dtype?: 'float32' | 'int64' }): Tensor;
  zeros(...shape: number[] | [Shape]): Tensor;
  ones(...shape: number[] | [Shape]): Tensor;
  full(shape: Shape, value: number): Tensor;
  randn(shape: Shape, options?: RandomOptions): Tensor;
  rand(shape: Shape, options?: RandomOptions): Tensor;
  nn: Nn;
  models: Models;
  optim: Optim;
  Dataset: DatasetClass;
  fit(model: Module, optimizer: Optimizer, dataset: Dataset, options?: FitOptions): Promise<FitResult>;
  /**
   * Evaluation mode, no gradients, in data-set order. Throws an Error of kind 'argument' for an empty
   * data set or a label outside the model's classes.
   */
  evaluate(model: Module, dataset: Dataset, options?: EvalOptions): EvalResult;
  /** The MNIST reference run: the same steps, and so the same hashes, as `lockstep train mnist`. */
  mnistReferenceRun(options: MnistRunOptions): Promise<MnistRunResult>;
  /**
   * Re-executes steps of a receipt of the MNIST reference run (this package's or the native
   * `lockstep train mnist --receipt`'s) or of fit() (options.model and options.optimizer), and
   * checks each against the receipt's hash chain.
   */
  verifyRun(receipt: Receipt | string, options: VerifyOptions): VerifyResult;
  /** The GPT example: corpora, model, training, sampling. */
  gpt: Gpt;
  /** ONNX models: the same output bits as the native `lockstep run` for the same file and input. */
  onnx: Onnx;
  scope<T>(fn: () => T): T;
  Owned: typeof Owned;
  /**
   * Seeds the default generators (an integer in [0, 2^53)), as torch.manual_seed: the stream 'init'
   * (layers' parameters, and randn/rand without a generator or seed) and the Dropout streams
   * 'dropout/0', 'dropout/1', ..., whose count it restarts.
   */
  manualSeed(seed: number): void;
  /** Runs a synchronous fn with autograd off. */
  noGrad<T>(fn: () => T): T;
  readonly gradEnabled: boolean;
  sha256(bytes: Uint8Array): string;
  heapInUse(): number;
  /**
   * Runs fn while recording an op-level trace (docs/diagnostics.md in the repository): every op's
   * step, phase, module path, hash of its exact output bits and statistics. Compare two traces with
   * the native `lockstep diff A B`. One trace at a time.
   */
  traced<T>(model: Module | null, fn: () => T | Promise<T>, options?: TraceOptions): Promise<TraceResult<T>>;
}

export interface TraceOptions {
  /** Steps whose records keep their full values in `values` (a safetensors sidecar). */
  valuesFrom?: number;
  valuesTo?: number;
  /** ... only records whose "module/op" or parameter name contains this. */
  valuesMatch?: string;
  /** Free text stored in the trace's header. */
  source?: string;
}

export interface TraceResult<T> {
  result: T;
  /** The trace: JSON lines (UTF-8). */
  trace: Uint8Array;
  /** The values sidecar (safetensors); empty when no records were chosen. */
  values: Uint8Array;
  records: number;
}
