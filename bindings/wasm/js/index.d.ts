// Types of the npm package `lockstep`.

/** Which WebAssembly build to load: both give identical bits; 'simd' is faster. */
export type Build = 'auto' | 'simd' | 'scalar';

export interface LoadOptions {
  /** Default 'auto': SIMD128 where the engine validates it, else scalar. */
  build?: Build;
  /** Where lockstep-{simd,scalar}.{mjs,wasm} are served; default: next to index.js. */
  baseUrl?: string | URL;
}

/** Loads and instantiates the engine. */
export function load(options?: LoadOptions): Promise<Lockstep>;
/** Whether this JavaScript engine can run the SIMD128 build. */
export function simdSupported(): boolean;
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
export type Labels = Tensor | ArrayLike<number>;

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
  backward(): void;
  detach(): Tensor;
  clone(): Tensor;
  copy_(other: Tensor): this;

  add(other: Tensor | number): Tensor;
  sub(other: Tensor | number): Tensor;
  mul(other: Tensor | number): Tensor;
  div(other: Tensor | number): Tensor;
  maximum(other: Tensor): Tensor;
  minimum(other: Tensor): Tensor;
  matmul(other: Tensor): Tensor;
  /** Correctly rounded integer power, exponent in [-4, 4]. */
  pow(exponent: number): Tensor;
  neg(): Tensor;
  relu(): Tensor;
  gelu(approximate?: 'none' | 'tanh'): Tensor;
  tanh(): Tensor;
  sigmoid(): Tensor;
  exp(): Tensor;
  log(): Tensor;
  sqrt(): Tensor;
  sum(dim?: number, keepdim?: boolean): Tensor;
  mean(dim?: number, keepdim?: boolean): Tensor;
  max(dim: number, keepdim?: boolean): Tensor;
  argmax(dim: number, keepdim?: boolean): Tensor;
  softmax(dim?: number): Tensor;
  logSoftmax(dim?: number): Tensor;
  reshape(...shape: number[] | [Shape]): Tensor;
  view(...shape: number[] | [Shape]): Tensor;
  transpose(dim0: number, dim1: number): Tensor;
  permute(...order: number[] | [number[]]): Tensor;
  flatten(startDim?: number, endDim?: number): Tensor;
  squeeze(dim: number): Tensor;
  unsqueeze(dim: number): Tensor;
  slice(dim: number, start: number, end: number, step?: number): Tensor;
  contiguous(): Tensor;
}

/** A named Philox stream under a seed: draws depend only on (seed, name, what was drawn before). */
export interface Generator extends Owned {
  readonly offset: number;
}

export interface RandomOptions {
  generator?: Generator;
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

export interface Nn {
  Module: ClassOf<Module>;
  Sequential: new (...modules: Module[]) => Sequential;
  Linear: new (inFeatures: number, outFeatures: number, options?: GeneratorOption & { bias?: boolean }) => Module;
  Conv2d: new (inChannels: number, outChannels: number, kernelSize: number,
               options?: GeneratorOption & { stride?: number; padding?: number; dilation?: number; groups?: number;
                                             bias?: boolean }) => Module;
  MaxPool2d: new (kernelSize: number, options?: { stride?: number; padding?: number }) => Module;
  AvgPool2d: new (kernelSize: number, options?: { stride?: number; padding?: number }) => Module;
  ReLU: new () => Module;
  Tanh: new () => Module;
  Sigmoid: new () => Module;
  GELU: new (options?: { approximate?: 'none' | 'tanh' }) => Module;
  Softmax: new (dim?: number) => Module;
  LogSoftmax: new (dim?: number) => Module;
  Flatten: new (startDim?: number, endDim?: number) => Module;
  Dropout: new (p?: number, options?: GeneratorOption) => Module;
  LayerNorm: new (normalizedShape: number, options?: { eps?: number; elementwiseAffine?: boolean; bias?: boolean }) => Module;
  Embedding: new (numEmbeddings: number, embeddingDim: number, options?: GeneratorOption) => Module;
  functional: {
    crossEntropy(logits: Tensor, targets: Labels, options?: { labelSmoothing?: number; ignoreIndex?: number }): Tensor;
    nllLoss(logProbs: Tensor, targets: Labels): Tensor;
    mseLoss(input: Tensor, target: Tensor): Tensor;
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
  lr: number;
  readonly stepCount: number;
}

export type Parameters = Module | Tensor[];

export interface Optim {
  Optimizer: ClassOf<Optimizer>;
  SGD: new (params: Parameters, options?: { lr?: number; momentum?: number; dampening?: number; weightDecay?: number;
                                            nesterov?: boolean }) => Optimizer;
  Adam: new (params: Parameters, options?: { lr?: number; betas?: [number, number]; eps?: number;
                                             weightDecay?: number }) => Optimizer;
  AdamW: new (params: Parameters, options?: { lr?: number; betas?: [number, number]; eps?: number;
                                              weightDecay?: number }) => Optimizer;
}

export interface DatasetClass extends ClassOf<Dataset> {
  /** IDX image and label files (MNIST's format); normalize applies (x - 0.1307) / 0.3081. */
  fromIdx(images: Uint8Array, labels: Uint8Array, options?: { normalize?: boolean }): Dataset;
  fromTensors(inputs: Tensor, labels: Tensor): Dataset;
}

export interface Dataset extends Owned {
  readonly size: number;
  readonly inputs: Tensor;
  readonly labels: Tensor;
  slice(start: number, count: number): Dataset;
}

export interface Progress {
  step: number;
  totalSteps: number;
  epoch: number;
  loss: number;
  stepsPerSecond: number;
  etaSeconds: number;
}

export interface FitOptions {
  epochs?: number;
  batchSize?: number;
  /** Seeds the shuffle order of every epoch. */
  seed?: number;
  maxSteps?: number;
  onProgress?: (progress: Progress) => void;
  signal?: AbortSignal;
  /** Steps between yields to the event loop (default 10). */
  yieldEvery?: number;
}

export interface FitResult {
  steps: number;
  losses: number[];
  finalLoss: number;
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
  epochs?: number;
  seed?: number;
  lr?: number;
  batchSize?: number;
  maxSteps?: number;
  maxTest?: number;
  onProgress?: (progress: Progress) => void;
  signal?: AbortSignal;
  yieldEvery?: number;
}

export interface MnistRunResult {
  initialHash: string;
  trainedHash: string;
  logitsHash: string;
  testAccuracy: number;
  testExamples: number;
  steps: number;
  finalLoss: number;
  losses: number[];
  /** The trained model: dispose it when done. */
  model: Module;
}

export type GptPreset = 'small' | 'tiny';

export interface GptOptions {
  /** 'small': 4 layers, 4 heads, 128 channels, block 64 (default); 'tiny': 2, 2, 32, block 16. */
  preset?: GptPreset;
  seed?: number;
  dropout?: number;
}

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
}

export interface CharCorpus extends Owned {
  readonly vocabSize: number;
  readonly vocab: string;
  readonly trainSize: number;
  readonly valSize: number;
  encode(text: string): number[];
  decode(ids: ArrayLike<number>): string;
}

export interface Gpt {
  CharCorpus: new (text: string, options?: { trainFraction?: number }) => CharCorpus;
  /** nanoGPT's architecture; forward takes int64 token ids [B, T] and gives logits [B, T, vocab]. */
  model(corpus: CharCorpus, options?: GptOptions): Module;
  /** Trains as `lockstep train gpt` does: the same hashes. */
  train(corpus: CharCorpus, options?: GptTrainOptions): Promise<GptTrainResult>;
  sample(model: Module, corpus: CharCorpus, prompt?: string,
         options?: { maxNewTokens?: number; temperature?: number; topK?: number; seed?: number }): string;
}

export interface Info {
  version: string;
  contractVersion: number;
  simdTarget: string;
  platform: string;
  build: 'simd' | 'scalar';
}

export interface Lockstep {
  readonly info: Info;
  Tensor: ClassOf<Tensor>;
  Generator: new (seed: number, name?: string) => Generator;
  tensor(data: ArrayLike<number> | NestedNumbers, shape?: Shape, options?: { dtype?: 'float32' | 'int64' }): Tensor;
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
  evaluate(model: Module, dataset: Dataset, options?: { batchSize?: number; limit?: number }): EvalResult;
  /** The MNIST reference run: the same steps, and so the same hashes, as `lockstep train mnist`. */
  mnistReferenceRun(options: MnistRunOptions): Promise<MnistRunResult>;
  /** The GPT example: corpora, model, training, sampling. */
  gpt: Gpt;
  scope<T>(fn: () => T): T;
  Owned: typeof Owned;
  manualSeed(seed: number): void;
  /** Runs a synchronous fn with autograd off. */
  noGrad<T>(fn: () => T): T;
  readonly gradEnabled: boolean;
  sha256(bytes: Uint8Array): string;
  heapInUse(): number;
}
