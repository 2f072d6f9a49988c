// A live line chart of the training loss per step (no dependencies).
export class LossChart {
  constructor(canvas) {
    this.canvas = canvas;
    this.losses = [];
    this.totalSteps = 1;
  }
  reset(totalSteps) {
    this.losses = [];
    this.totalSteps = Math.max(1, totalSteps);
    this.draw();
  }
  push(loss) {
    this.losses.push(loss);
    if (this.losses.length % 4 === 0 || this.losses.length === this.totalSteps) this.draw();
  }
  draw() {
    const { canvas } = this;
    const g = canvas.getContext('2d');
    const w = canvas.width, h = canvas.height, pad = 30;
    g.clearRect(0, 0, w, h);
    g.strokeStyle = '#c9cdd1';
    g.strokeRect(pad, 5, w - pad - 5, h - pad - 5);
    g.fillStyle = '#5d6670';
    g.font = '11px system-ui, sans-serif';
    const top = Math.max(2.5, ...this.losses.filter(Number.isFinite));
    g.fillText(top.toFixed(1), 2, 14);
    g.fillText('0', 18, h - pad);
    g.fillText(`step ${this.losses.length} / ${this.totalSteps}`, w - 120, h - 8);
    if (this.losses.length < 2) return;
    g.strokeStyle = '#3b6fb6';
    g.lineWidth = 1.5;
    g.beginPath();
    this.losses.forEach((loss, i) => {
      const x = pad + (i / Math.max(1, this.totalSteps - 1)) * (w - pad - 5);
      const y = 5 + (1 - Math.min(loss, top) / top) * (h - pad - 5);
      if (i === 0) g.moveTo(x, y); else g.lineTo(x, y);
    });
    g.stroke();
  }
}
