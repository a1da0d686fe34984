"""Checks for the training-step tests (train-*.mlir, test/Driver/train-*).

  close-json A.json B.json RTOL   two loss lists agree; says whether A falls
  momentum W X LABELS STEPS LR MU OUTDIR
      numpy reference of train-steps.mlir: `STEPS` steps of y = x @ w,
      loss = mean((y - labels)^2), SGD with momentum (PyTorch's form,
      buffer starting at zero); writes OUTDIR/{losses.json,w.npy,m.npy}
"""
import json
import os
import sys


def close_json(a_path, b_path, rtol):
    a, b = json.load(open(a_path)), json.load(open(b_path))
    if len(a) != len(b):
        raise SystemExit("MISMATCH: %d vs %d losses" % (len(a), len(b)))
    for k, (x, y) in enumerate(zip(a, b)):
        if abs(x - y) > rtol * abs(y) + 1e-7:
            raise SystemExit("MISMATCH at step %d: %r vs %r" % (k + 1, x, y))
    trend = "falling" if all(x > y for x, y in zip(a, a[1:])) else "not falling"
    print("MATCH %d losses, %s" % (len(a), trend))


def momentum(w_path, x_path, labels_path, steps, lr, mu, out_dir):
    import numpy as np

    w = np.load(w_path).astype(np.float32)
    x = np.load(x_path).astype(np.float32)
    labels = np.load(labels_path).astype(np.float32)
    m = np.zeros_like(w)
    losses = []
    for _ in range(steps):
        d = x @ w - labels
        losses.append(float((d * d).mean()))
        grad = (2.0 / d.size) * (x.T @ d)
        m = np.float32(mu) * m + grad
        w = w - np.float32(lr) * m
    os.makedirs(out_dir, exist_ok=True)
    json.dump(losses, open(os.path.join(out_dir, "losses.json"), "w"))
    np.save(os.path.join(out_dir, "w.npy"), w.astype(np.float32))
    np.save(os.path.join(out_dir, "m.npy"), m.astype(np.float32))


def main(argv):
    if argv[1] == "close-json":
        close_json(argv[2], argv[3], float(argv[4]))
    elif argv[1] == "momentum":
        momentum(argv[2], argv[3], argv[4], int(argv[5]), float(argv[6]),
                 float(argv[7]), argv[8])
    else:
        raise SystemExit("unknown command " + argv[1])


if __name__ == "__main__":
    main(sys.argv)
