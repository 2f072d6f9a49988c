// A drawing pad that turns strokes into a 28x28 MNIST-style image: the ink's bounding box scaled
// to fit 20x20, centred by its centre of mass in the 28x28 frame, white on black in [0, 1].
export class DigitPad {
  constructor(canvas, onChange) {
    this.canvas = canvas;
    this.onChange = onChange;
    this.drawing = false;
    const g = canvas.getContext('2d');
    g.lineCap = 'round';
    g.lineJoin = 'round';
    g.lineWidth = 22;
    g.strokeStyle = '#fff';
    this.clear();
    canvas.addEventListener('pointerdown', (e) => {
      this.drawing = true;
      canvas.setPointerCapture(e.pointerId);
      const [x, y] = this.#point(e);
      g.beginPath();
      g.moveTo(x, y);
      g.lineTo(x + 0.1, y + 0.1);
      g.stroke();
    });
    canvas.addEventListener('pointermove', (e) => {
      if (!this.drawing) return;
      const [x, y] = this.#point(e);
      g.lineTo(x, y);
      g.stroke();
    });
    const end = () => {
      if (!this.drawing) return;
      this.drawing = false;
      this.onChange(this.pixels());
    };
    canvas.addEventListener('pointerup', end);
    canvas.addEventListener('pointerleave', end);
  }

  clear() {
    const g = this.canvas.getContext('2d');
    g.fillStyle = '#000';
    g.fillRect(0, 0, this.canvas.width, this.canvas.height);
  }

  #point(e) {
    const r = this.canvas.getBoundingClientRect();
    return [(e.clientX - r.left) * (this.canvas.width / r.width), (e.clientY - r.top) * (this.canvas.height / r.height)];
  }

  // 784 floats, or null when nothing is drawn.
  pixels() {
    const { width, height } = this.canvas;
    const ink = this.canvas.getContext('2d').getImageData(0, 0, width, height).data;
    let minX = width, minY = height, maxX = -1, maxY = -1;
    for (let y = 0; y < height; ++y) {
      for (let x = 0; x < width; ++x) {
        if (ink[(y * width + x) * 4] > 20) {
          minX = Math.min(minX, x); maxX = Math.max(maxX, x);
          minY = Math.min(minY, y); maxY = Math.max(maxY, y);
        }
      }
    }
    if (maxX < 0) return null;
    const boxW = maxX - minX + 1, boxH = maxY - minY + 1;
    const scale = 20 / Math.max(boxW, boxH);
    const small = new OffscreenCanvas(28, 28);
    const s = small.getContext('2d');
    s.fillStyle = '#000';
    s.fillRect(0, 0, 28, 28);
    s.imageSmoothingQuality = 'high';
    const dw = boxW * scale, dh = boxH * scale;
    s.drawImage(this.canvas, minX, minY, boxW, boxH, (28 - dw) / 2, (28 - dh) / 2, dw, dh);
    const data = s.getImageData(0, 0, 28, 28).data;
    const gray = new Float32Array(784);
    let mass = 0, cx = 0, cy = 0;
    for (let i = 0; i < 784; ++i) {
      gray[i] = data[i * 4] / 255;
      mass += gray[i];
      cx += gray[i] * (i % 28);
      cy += gray[i] * Math.floor(i / 28);
    }
    // Shift so the centre of mass sits at the centre, as MNIST's digits do.
    const dx = Math.round(13.5 - cx / mass), dy = Math.round(13.5 - cy / mass);
    const out = new Float32Array(784);
    for (let y = 0; y < 28; ++y) {
      for (let x = 0; x < 28; ++x) {
        const sx = x - dx, sy = y - dy;
        if (sx >= 0 && sx < 28 && sy >= 0 && sy < 28) out[y * 28 + x] = gray[sy * 28 + sx];
      }
    }
    return out;
  }
}
