"""Learning-rate schedules: torch.optim.lr_scheduler.StepLR and nanoGPT's cosine with warmup,
each value computed by the engine (core/optim/optimizer.h) so every platform gets the same float."""
from .. import _C


class StepLR:
    """lr = base_lr * gamma ** (epoch // step_size); step() once per epoch."""

    def __init__(self, optimizer, step_size, gamma=0.1):
        self.optimizer, self.step_size, self.gamma = optimizer, int(step_size), float(gamma)
        self.base_lr = optimizer.lr
        self.last_epoch = 0

    def step(self):
        self.last_epoch += 1
        self.optimizer.lr = _C.step_lr(self.base_lr, self.last_epoch, self.step_size, self.gamma)

    def get_last_lr(self):
        return [self.optimizer.lr]


class CosineWithWarmup:
    """nanoGPT's schedule: warmup base_lr * (step + 1) / (warmup + 1) for the first ``warmup``
    steps, then cosine decay to ``min_lr`` at ``decay_steps``; step() once per optimizer step (the
    rate is step 0's from construction)."""

    def __init__(self, optimizer, warmup, decay_steps, min_lr=0.0):
        self.optimizer, self.warmup, self.decay_steps, self.min_lr = optimizer, int(warmup), int(decay_steps), float(min_lr)
        self.base_lr = optimizer.lr
        self.last_step = 0
        optimizer.lr = _C.cosine_with_warmup(self.base_lr, self.min_lr, 0, self.warmup, self.decay_steps)

    def step(self):
        self.last_step += 1
        self.optimizer.lr = _C.cosine_with_warmup(self.base_lr, self.min_lr, self.last_step, self.warmup,
                                                  self.decay_steps)

    def get_last_lr(self):
        return [self.optimizer.lr]
