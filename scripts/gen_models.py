#!/usr/bin/env python3
"""Generate MLIR models (MLP stack, self-attention block, small GPT) for
autoshard's tests, benchmarks and examples.

The output is linalg/tensor/arith/math on statically shaped f32 tensors with
all weights as arguments of @main, optionally annotated for sharding:

  --annotate dist   autoshard's `dist.annotate` on the input and the weights,
                    mesh as the module attribute `dist.mesh`;
  --annotate shard  upstream MLIR 22 `shard.grid`/`shard.sharding`/`shard.shard`
                    as `mlir-opt --sharding-propagation` expects them;
  --annotate none   no annotations (single-device program).

The annotations are the Megatron-LM ones: batch on the data-parallel axis,
attention heads, MLP hidden units and the vocabulary on the model-parallel
axis; only arguments are annotated, everything else is left to propagation.

Standard library only: CI runs this with a bare python3.

Examples:
  gen_models.py mlp --layers 2 --batch 8 --hidden 16 --ffn 64
  gen_models.py attention --batch 4 --seq 8 --heads 4 --head-dim 8 --annotate shard
  gen_models.py gpt --layers 2 --mesh dp=2,mp=4 > examples/gpt.mlir
"""

import argparse
import math
import sys


class GenError(Exception):
    """A user error: printed as one line, exit status 1."""


def ttype(shape, elt="f32"):
    return "tensor<" + "".join("%dx" % d for d in shape) + elt + ">"


def fconst(value):
    # MLIR float literals need a '.' or an exponent; 9 significant digits
    # round-trip an f32 exactly.
    return "%.9e" % value


def affine_map(num_dims, results):
    dims = ", ".join("d%d" % i for i in range(num_dims))
    return "affine_map<(%s) -> (%s)>" % (dims, ", ".join(results))


def identity_map(rank):
    return affine_map(rank, ["d%d" % i for i in range(rank)])


class Mesh:
    """The device mesh plus which axes play the data/model parallel roles."""

    def __init__(self, spec, dp_axis, mp_axis):
        self.names = []
        self.sizes = []
        for part in spec.split(","):
            name, sep, size = part.partition("=")
            name = name.strip()
            if not sep or not name.isidentifier() or not size.strip().isdigit():
                raise GenError("bad --mesh entry '%s' (expected NAME=SIZE, "
                               "e.g. dp=2,mp=4)" % part)
            if name in self.names:
                raise GenError("--mesh names axis '%s' twice" % name)
            if int(size) < 1:
                raise GenError("--mesh axis '%s' has size %s" % (name, size))
            self.names.append(name)
            self.sizes.append(int(size))
        self.dp = self._role(dp_axis, "--dp-axis")
        self.mp = self._role(mp_axis, "--mp-axis")
        if self.dp is not None and self.dp == self.mp:
            raise GenError("--dp-axis and --mp-axis are both '%s'" % dp_axis)

    def _role(self, name, flag):
        if name == "none":
            return None
        if name not in self.names:
            raise GenError("--mesh has no axis '%s' (set %s to an axis of the "
                           "mesh or to 'none')" % (name, flag))
        return name

    def size(self, axis):
        return 1 if axis is None else self.sizes[self.names.index(axis)]

    def index(self, axis):
        return self.names.index(axis)

    def dist_attr(self):
        return "#dist.mesh<[%s]>" % ", ".join(
            "%s = %d" % a for a in zip(self.names, self.sizes))


class Builder:
    """Emits the body of @main with fresh SSA names and typed helpers."""

    def __init__(self, annotate, mesh, form, params=False):
        self.annotate = annotate
        self.params = params
        self.mesh = mesh
        self.form = form
        self.neg_inf = None
        self.args = []  # (name, type)
        self.lines = []
        self.counts = {}
        self.zero = None
        self.num_shardings = 0

    def fresh(self, prefix):
        n = self.counts.get(prefix, 0)
        self.counts[prefix] = n + 1
        return "%%%s%d" % (prefix, n)

    def emit(self, line):
        self.lines.append("    " + line)

    # -- arguments and annotations ------------------------------------------

    def arg(self, name, shape, layout=None, elt="f32", param=True):
        """Adds a function argument; `layout` lists the role ('dp', 'mp' or
        None) splitting each dim; `param`: a weight (not the model's input),
        marked trainable with --params. Returns the value to use in the
        body."""
        ssa = "%" + name
        ty = ttype(shape, elt)
        attrs = ""
        if self.params:
            attrs = ' {dist.name = "%s"%s}' % (name,
                                               ", dist.param" if param else "")
        self.args.append((ssa, ty + attrs))
        if layout is None or self.annotate == "none":
            return ssa
        axes = [self.axis_for(role) for role in layout]
        for dim, axis in enumerate(axes):
            if axis is not None and shape[dim] % self.mesh.size(axis):
                raise GenError("dim %d (size %d) of '%s' is not divisible by "
                               "mesh axis '%s' (size %d)" %
                               (dim, shape[dim], name, axis,
                                self.mesh.size(axis)))
        if all(a is None for a in axes):
            return ssa
        out = "%%%s_s" % name
        if self.annotate == "dist":
            dims = ", ".join("[%s]" % (a or "") for a in axes)
            self.emit("%s = dist.annotate %s : %s as #dist.layout<#mesh, [%s]>"
                      % (out, ssa, ty, dims))
        else:
            # Upstream split_axes drop trailing unsplit dims.
            split = ["[%s]" % ("" if a is None else self.mesh.index(a))
                     for a in axes]
            while split and split[-1] == "[]":
                split.pop()
            sharding = "%%sharding%d" % self.num_shardings
            self.num_shardings += 1
            self.emit("%s = shard.sharding @grid split_axes = [%s] : "
                      "!shard.sharding" % (sharding, ", ".join(split)))
            self.emit("%s = shard.shard %s to %s : %s" % (out, ssa, sharding,
                                                          ty))
        return out

    def axis_for(self, role):
        if role is None:
            return None
        return {"dp": self.mesh.dp, "mp": self.mesh.mp}[role]

    # -- tensor helpers -------------------------------------------------------

    def zeros(self, shape):
        if self.zero is None:
            self.zero = "%zero"
            self.lines.insert(0, "    %zero = arith.constant 0.000000e+00 : f32")
        empty = self.empty(shape)
        out = self.fresh("init")
        self.emit("%s = linalg.fill ins(%s : f32) outs(%s : %s) -> %s" %
                  (out, self.zero, empty, ttype(shape), ttype(shape)))
        return out

    def empty(self, shape):
        out = self.fresh("empty")
        self.emit("%s = tensor.empty() : %s" % (out, ttype(shape)))
        return out

    def matmul(self, a, b, m, k, n, prefix="mm"):
        init = self.zeros([m, n])
        out = self.fresh(prefix)
        self.emit("%s = linalg.matmul ins(%s, %s : %s, %s) outs(%s : %s) -> %s"
                  % (out, a, b, ttype([m, k]), ttype([k, n]), init,
                     ttype([m, n]), ttype([m, n])))
        return out

    def batch_matmul(self, a, b, batch, m, k, n, prefix="bmm"):
        init = self.zeros([batch, m, n])
        out = self.fresh(prefix)
        self.emit("%s = linalg.batch_matmul ins(%s, %s : %s, %s) outs(%s : %s)"
                  " -> %s" % (out, a, b, ttype([batch, m, k]),
                              ttype([batch, k, n]), init,
                              ttype([batch, m, n]), ttype([batch, m, n])))
        return out

    def expand(self, x, in_shape, out_shape, reassoc, prefix="expand",
               elt="f32"):
        out = self.fresh(prefix)
        self.emit("%s = tensor.expand_shape %s %s output_shape %s : %s into %s"
                  % (out, x, reassoc_str(reassoc), list(out_shape),
                     ttype(in_shape, elt), ttype(out_shape, elt)))
        return out

    def collapse(self, x, in_shape, out_shape, reassoc, prefix="collapse"):
        out = self.fresh(prefix)
        self.emit("%s = tensor.collapse_shape %s %s : %s into %s" %
                  (out, x, reassoc_str(reassoc), ttype(in_shape),
                   ttype(out_shape)))
        return out

    def transpose(self, x, in_shape, perm, prefix="transpose"):
        out_shape = [in_shape[p] for p in perm]
        init = self.empty(out_shape)
        out = self.fresh(prefix)
        self.emit("%s = linalg.transpose ins(%s : %s) outs(%s : %s) "
                  "permutation = %s" % (out, x, ttype(in_shape), init,
                                        ttype(out_shape), list(perm)))
        return out, out_shape

    def generic(self, ins, out_shape, out_map, iterators, body, init=None,
                prefix="g"):
        """ins: [(value, shape, map[, element type])]; body: lines using
        %in0.. and %out, the last line yields. init: an existing output
        tensor, else a tensor.empty."""
        if init is None:
            init = self.empty(out_shape)
        ins = [tuple(i) if len(i) == 4 else tuple(i) + ("f32",) for i in ins]
        out = self.fresh(prefix)
        maps = [i[2] for i in ins] + [out_map]
        self.emit("%s = linalg.generic {indexing_maps = [%s], "
                  "iterator_types = [%s]}" %
                  (out, ", ".join(maps),
                   ", ".join('"%s"' % it for it in iterators)))
        if ins:
            self.emit("    ins(%s : %s)" %
                      (", ".join(i[0] for i in ins),
                       ", ".join(ttype(i[1], i[3]) for i in ins)))
        self.emit("    outs(%s : %s) {" % (init, ttype(out_shape)))
        block_args = ["%%in%d: %s" % (n, i[3]) for n, i in enumerate(ins)]
        self.emit("  ^bb0(%s):" % ", ".join(block_args + ["%out: f32"]))
        for line in body:
            self.emit("    " + line)
        self.emit("  } -> %s" % ttype(out_shape))
        return out

    def einsum(self, spec, a, b, sizes, prefix="ein"):
        """A contraction as linalg.generic, e.g. "bse,ehd->bhsd": loops are the
        output letters (parallel) then the summed letters (reduction)."""
        operands, result = spec.split("->")
        la, lb = operands.split(",")
        red = [c for c in la + lb if c not in result]
        red = sorted(set(red), key=red.index)
        loops = list(result) + red
        n = len(loops)

        def amap(letters):
            return affine_map(n, ["d%d" % loops.index(c) for c in letters])

        out_shape = [sizes[c] for c in result]
        return self.generic(
            [(a, [sizes[c] for c in la], amap(la)),
             (b, [sizes[c] for c in lb], amap(lb))], out_shape, amap(result),
            ["parallel"] * len(result) + ["reduction"] * len(red),
            ["%p = arith.mulf %in0, %in1 : f32",
             "%r = arith.addf %out, %p : f32", "linalg.yield %r : f32"],
            init=self.zeros(out_shape), prefix=prefix)

    def dense(self, x, lead, k, n, w, prefix="mm"):
        """x [lead..., k] times w [k, n]: linalg.matmul on 2-D activations,
        a linalg.generic contraction on higher-rank ones."""
        if len(lead) == 1:
            return self.matmul(x, w, lead[0], k, n, prefix=prefix)
        letters = "abcdefgh"[:len(lead)]
        sizes = dict(zip(letters, lead))
        sizes.update(k=k, n=n)
        return self.einsum("%sk,kn->%sn" % (letters, letters), x, w, sizes,
                           prefix=prefix)

    # -- model pieces ---------------------------------------------------------

    def gelu(self, x, shape):
        """GELU, tanh approximation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))."""
        rank = len(shape)
        body = [
            "%c_half = arith.constant " + fconst(0.5) + " : f32",
            "%c_one = arith.constant " + fconst(1.0) + " : f32",
            "%c_k = arith.constant " + fconst(0.044715) + " : f32",
            "%c_s = arith.constant " + fconst(math.sqrt(2.0 / math.pi)) +
            " : f32",
            "%x2 = arith.mulf %in0, %in0 : f32",
            "%x3 = arith.mulf %x2, %in0 : f32",
            "%kx3 = arith.mulf %c_k, %x3 : f32",
            "%inner = arith.addf %in0, %kx3 : f32",
            "%scaled = arith.mulf %c_s, %inner : f32",
            "%th = math.tanh %scaled : f32",
            "%onep = arith.addf %c_one, %th : f32",
            "%hx = arith.mulf %c_half, %in0 : f32",
            "%r = arith.mulf %hx, %onep : f32",
            "linalg.yield %r : f32",
        ]
        return self.generic([(x, shape, identity_map(rank))], shape,
                            identity_map(rank), ["parallel"] * rank, body,
                            prefix="gelu")

    def add(self, a, b, shape, prefix="add"):
        rank = len(shape)
        return self.generic([(a, shape, identity_map(rank)),
                             (b, shape, identity_map(rank))], shape,
                            identity_map(rank), ["parallel"] * rank,
                            ["%r = arith.addf %in0, %in1 : f32",
                             "linalg.yield %r : f32"], prefix=prefix)

    def layer_norm(self, x, shape, gamma, beta, eps=1e-5):
        """Layer norm over the last dim of x: two row reductions (mean,
        variance) and an elementwise normalisation with gamma/beta."""
        n = len(shape)
        rows, cols = shape[:-1], shape[-1]
        full = identity_map(n)
        rowmap = affine_map(n, ["d%d" % i for i in range(n - 1)])
        colmap = affine_map(n, ["d%d" % (n - 1)])
        par = ["parallel"] * n
        red = ["parallel"] * (n - 1) + ["reduction"]
        inv_n = "%c_inv_n = arith.constant " + fconst(1.0 / cols) + " : f32"
        total = self.generic([(x, shape, full)], rows, rowmap, red,
                             ["%r = arith.addf %in0, %out : f32",
                              "linalg.yield %r : f32"],
                             init=self.zeros(rows), prefix="ln_sum")
        centered = self.generic(
            [(x, shape, full), (total, rows, rowmap)], shape, full, par,
            [inv_n, "%mean = arith.mulf %in1, %c_inv_n : f32",
             "%r = arith.subf %in0, %mean : f32",
             "linalg.yield %r : f32"], prefix="ln_centered")
        sq = self.generic([(centered, shape, full)], rows, rowmap, red,
                          ["%sq = arith.mulf %in0, %in0 : f32",
                           "%r = arith.addf %sq, %out : f32",
                           "linalg.yield %r : f32"],
                          init=self.zeros(rows), prefix="ln_sqsum")
        return self.generic(
            [(centered, shape, full), (sq, rows, rowmap),
             (gamma, [cols], colmap), (beta, [cols], colmap)], shape, full,
            par,
            [inv_n, "%c_eps = arith.constant " + fconst(eps) + " : f32",
             "%var = arith.mulf %in1, %c_inv_n : f32",
             "%vare = arith.addf %var, %c_eps : f32",
             "%rstd = math.rsqrt %vare : f32",
             "%xn = arith.mulf %in0, %rstd : f32",
             "%xg = arith.mulf %xn, %in2 : f32",
             "%r = arith.addf %xg, %in3 : f32",
             "linalg.yield %r : f32"], prefix="ln")

    def mlp(self, x, lead, hidden, ffn, w1, w2):
        """Megatron MLP: gelu(x W1) W2 on x [lead..., hidden]."""
        h = self.dense(x, lead, hidden, ffn, w1, prefix="fc1_")
        g = self.gelu(h, lead + [ffn])
        return self.dense(g, lead, ffn, hidden, w2, prefix="fc2_")

    def causal_mask(self, seq):
        # A dense constant rather than linalg.index in a body: after
        # partitioning, linalg.index would count from the local shard.
        mask = self.fresh("causal_mask")
        rows = ", ".join(
            "[%s]" % ", ".join("0.0" if j <= i else "-1.0e+09"
                               for j in range(seq)) for i in range(seq))
        self.emit("%s = arith.constant dense<[%s]> : %s" %
                  (mask, rows, ttype([seq, seq])))
        return mask

    def scale_scores(self, scores, shape, head_dim, causal):
        """scores / sqrt(head_dim) (+ causal mask on the last two dims)."""
        n = len(shape)
        ident = identity_map(n)
        scale = "%c_scale = arith.constant " + fconst(
            1.0 / math.sqrt(head_dim)) + " : f32"
        if not causal:
            return self.generic([(scores, shape, ident)], shape, ident,
                                ["parallel"] * n,
                                [scale, "%r = arith.mulf %in0, %c_scale : f32",
                                 "linalg.yield %r : f32"], prefix="scaled")
        if self.form == "einsum":
            # Upstream shard-partition rejects non-splat constants (LLVM 22),
            # so the einsum form computes the mask from linalg.index. That is
            # only right while the two sequence dims stay unsplit: upstream
            # keeps linalg.index local after partitioning.
            return self.generic(
                [(scores, shape, ident)], shape, ident, ["parallel"] * n,
                [scale, "%c_neg = arith.constant " + fconst(-1e9) + " : f32",
                 "%c_zero = arith.constant " + fconst(0.0) + " : f32",
                 "%%i = linalg.index %d : index" % (n - 2),
                 "%%j = linalg.index %d : index" % (n - 1),
                 "%future = arith.cmpi ugt, %j, %i : index",
                 "%mask = arith.select %future, %c_neg, %c_zero : f32",
                 "%sc = arith.mulf %in0, %c_scale : f32",
                 "%r = arith.addf %sc, %mask : f32", "linalg.yield %r : f32"],
                prefix="scaled")
        mask = self.causal_mask(shape[-1])
        return self.generic(
            [(scores, shape, ident),
             (mask, shape[-2:], affine_map(n, ["d%d" % (n - 2),
                                                "d%d" % (n - 1)]))],
            shape, ident, ["parallel"] * n,
            [scale, "%sc = arith.mulf %in0, %c_scale : f32",
             "%r = arith.addf %sc, %in1 : f32", "linalg.yield %r : f32"],
            prefix="scaled")

    def softmax(self, x, shape):
        """Softmax over the last dim: linalg.softmax in the reshape form;
        max/exp/sum/divide generics in the einsum form (upstream `shard`
        has no sharding model for linalg.softmax)."""
        n = len(shape)
        if self.form == "reshape":
            out = self.fresh("probs")
            init = self.empty(shape)
            self.emit("%s = linalg.softmax dimension(%d) ins(%s : %s) outs(%s "
                      ": %s) -> %s" % (out, n - 1, x, ttype(shape), init,
                                       ttype(shape), ttype(shape)))
            return out
        rows = shape[:-1]
        full = identity_map(n)
        rowmap = affine_map(n, ["d%d" % i for i in range(n - 1)])
        par = ["parallel"] * n
        red = ["parallel"] * (n - 1) + ["reduction"]
        if self.neg_inf is None:
            self.neg_inf = "%neg_inf"
            self.lines.insert(0, "    %neg_inf = arith.constant 0xFF800000 : "
                              "f32")
        empty = self.empty(rows)
        init = self.fresh("init")
        self.emit("%s = linalg.fill ins(%s : f32) outs(%s : %s) -> %s" %
                  (init, self.neg_inf, empty, ttype(rows), ttype(rows)))
        mx = self.generic([(x, shape, full)], rows, rowmap, red,
                          ["%r = arith.maximumf %in0, %out : f32",
                           "linalg.yield %r : f32"], init=init,
                          prefix="sm_max")
        ex = self.generic([(x, shape, full), (mx, rows, rowmap)], shape, full,
                          par, ["%d = arith.subf %in0, %in1 : f32",
                                "%r = math.exp %d : f32",
                                "linalg.yield %r : f32"], prefix="sm_exp")
        sm = self.generic([(ex, shape, full)], rows, rowmap, red,
                          ["%r = arith.addf %in0, %out : f32",
                           "linalg.yield %r : f32"], init=self.zeros(rows),
                          prefix="sm_sum")
        return self.generic([(ex, shape, full), (sm, rows, rowmap)], shape,
                            full, par, ["%r = arith.divf %in0, %in1 : f32",
                                        "linalg.yield %r : f32"],
                            prefix="probs")

    def attention(self, x, batch, seq, heads, head_dim, wq, wk, wv, wo,
                  causal):
        """Multi-head self-attention. Reshape form: x [batch*seq, embed],
        weights [embed, embed]; heads are split out with expand_shape, moved
        in front of the batch with linalg.transpose and merged heads-major
        into the batch dim of linalg.batch_matmul ([NH*B, S, D]): with heads
        on mp split down to one head per device, heads on mp and batch on dp
        are then one contiguous block of the merged dim, which a batch-major
        merge cannot express once the local batch exceeds 1. Einsum form: x [batch, seq, embed], Wq/Wk/Wv
        [embed, heads, head_dim], Wo [heads, head_dim, embed] (the same bytes
        as [embed, embed]), every product a linalg.generic contraction."""
        if self.form == "einsum":
            sizes = dict(b=batch, s=seq, t=seq, h=heads, d=head_dim,
                         e=heads * head_dim)
            q = self.einsum("bse,ehd->bhsd", x, wq, sizes, prefix="q")
            k = self.einsum("bse,ehd->bhsd", x, wk, sizes, prefix="k")
            v = self.einsum("bse,ehd->bhsd", x, wv, sizes, prefix="v")
            scores = self.einsum("bhsd,bhtd->bhst", q, k, sizes,
                                 prefix="scores")
            shape = [batch, heads, seq, seq]
            probs = self.softmax(
                self.scale_scores(scores, shape, head_dim, causal), shape)
            ctx = self.einsum("bhst,bhtd->bhsd", probs, v, sizes, prefix="ctx")
            return self.einsum("bhsd,hde->bse", ctx, wo, sizes,
                               prefix="attn_out")

        tokens, embed, bh = batch * seq, heads * head_dim, batch * heads
        split = [[0, 1], [2, 3]]

        def heads_of(w, perm, name):
            y = self.matmul(x, w, tokens, embed, embed, prefix=name)
            y4 = self.expand(y, [tokens, embed], [batch, seq, heads, head_dim],
                             split, prefix=name + "heads")
            yt, shape = self.transpose(y4, [batch, seq, heads, head_dim], perm,
                                       prefix=name + "t")
            return self.collapse(yt, shape, [bh] + shape[2:],
                                 [[0, 1], [2], [3]], prefix=name + "b")

        q = heads_of(wq, [2, 0, 1, 3], "q")  # [NH*B, S, D]
        k = heads_of(wk, [2, 0, 3, 1], "k")  # [NH*B, D, S]
        v = heads_of(wv, [2, 0, 1, 3], "v")  # [NH*B, S, D]
        scores = self.batch_matmul(q, k, bh, seq, head_dim, seq,
                                   prefix="scores")
        shape = [bh, seq, seq]
        probs = self.softmax(self.scale_scores(scores, shape, head_dim, causal),
                             shape)
        ctx = self.batch_matmul(probs, v, bh, seq, seq, head_dim, prefix="ctx")
        ctx4 = self.expand(ctx, [bh, seq, head_dim],
                           [heads, batch, seq, head_dim], [[0, 1], [2], [3]],
                           prefix="ctxheads")
        ctxt, shape = self.transpose(ctx4, [heads, batch, seq, head_dim],
                                     [1, 2, 0, 3], prefix="ctxt")
        merged = self.collapse(ctxt, shape, [tokens, embed], split,
                               prefix="ctxm")
        return self.matmul(merged, wo, tokens, embed, embed, prefix="attn_out")

    def module(self, result, result_type):
        out = []
        if self.annotate == "dist":
            out.append("#mesh = " + self.mesh.dist_attr())
            out.append("module attributes {dist.mesh = #mesh} {")
        else:
            out.append("module {")
        if self.annotate == "shard":
            out.append("  shard.grid @grid(shape = %s)" %
                       "x".join(str(s) for s in self.mesh.sizes))
        out.append("  func.func @main(%s) -> %s {" % (
            ", ".join("%s: %s" % a for a in self.args), result_type))
        out.extend(self.lines)
        out.append("    return %s : %s" % (result, result_type))
        out.append("  }")
        out.append("}")
        return "\n".join(out) + "\n"


def reassoc_str(reassoc):
    return "[%s]" % ", ".join("[%s]" % ", ".join(str(i) for i in group)
                              for group in reassoc)


def require(cond, message):
    if not cond:
        raise GenError(message)


def positive(args, *names):
    for name in names:
        value = getattr(args, name)
        require(value >= 1, "--%s must be positive (got %d)" %
                (name.replace("_", "-"), value))


def header(argv):
    return "// Generated by scripts/gen_models.py %s\n" % " ".join(argv)


def gen_mlp(args, b):
    positive(args, "layers", "batch", "hidden", "ffn")
    x = b.arg("x", [args.batch, args.hidden], ["dp", None], param=False)
    weights = []
    for layer in range(args.layers):
        w1 = b.arg("w1_%d" % layer, [args.hidden, args.ffn], [None, "mp"])
        w2 = b.arg("w2_%d" % layer, [args.ffn, args.hidden], ["mp", None])
        weights.append((w1, w2))
    for w1, w2 in weights:
        x = b.mlp(x, [args.batch], args.hidden, args.ffn, w1, w2)
    return x, ttype([args.batch, args.hidden])


def attention_weights(b, heads, head_dim, suffix=""):
    """Wq, Wk, Wv (columns = heads on mp) and Wo (rows = heads on mp)."""
    embed = heads * head_dim
    if b.form == "einsum":
        shapes = {"o": ([heads, head_dim, embed], ["mp", None, None]),
                  "": ([embed, heads, head_dim], [None, "mp", None])}
    else:
        shapes = {"o": ([embed, embed], ["mp", None]),
                  "": ([embed, embed], [None, "mp"])}
    return [b.arg("w%s%s" % (n, suffix), *shapes["o" if n == "o" else ""])
            for n in ("q", "k", "v", "o")]


def check_divisible(b, what, size, role):
    axis = b.axis_for(role) if b.annotate != "none" else None
    require(size % b.mesh.size(axis) == 0,
            "%s (%d) is not divisible by mesh axis '%s' (size %d)" %
            (what, size, axis, b.mesh.size(axis)))


def gen_attention(args, b):
    positive(args, "batch", "seq", "heads", "head_dim")
    check_divisible(b, "--heads", args.heads, "mp")
    embed = args.heads * args.head_dim
    shape = [args.batch, args.seq, embed]
    x = b.arg("x", shape, ["dp", None, None], param=False)
    ws = attention_weights(b, args.heads, args.head_dim)
    if b.form == "einsum":
        y = b.attention(x, args.batch, args.seq, args.heads, args.head_dim,
                        *ws, causal=args.causal)
        return y, ttype(shape)
    tokens = args.batch * args.seq
    x2 = b.collapse(x, shape, [tokens, embed], [[0, 1], [2]], prefix="tokens")
    y = b.attention(x2, args.batch, args.seq, args.heads, args.head_dim, *ws,
                    causal=args.causal)
    out = b.expand(y, [tokens, embed], shape, [[0, 1], [2]], prefix="out")
    return out, ttype(shape)


def gen_gpt(args, b):
    positive(args, "layers", "vocab", "seq", "batch", "embed", "heads")
    require(args.embed % args.heads == 0,
            "--embed %d is not divisible by --heads %d" %
            (args.embed, args.heads))
    check_divisible(b, "--heads", args.heads, "mp")
    bsz, seq, embed, vocab = args.batch, args.seq, args.embed, args.vocab
    ffn = args.ffn if args.ffn else 4 * embed
    require(ffn >= 1, "--ffn must be positive (got %d)" % ffn)
    head_dim = embed // args.heads
    tokens = bsz * seq

    ids = b.arg("ids", [bsz, seq], ["dp", None], elt="i64", param=False)
    # Vocab-parallel table in the reshape form. The einsum form's lookup
    # indexes the vocabulary with linalg.index, which upstream keeps local
    # when v is split (silently wrong), so there the table is left
    # unannotated.
    wte = b.arg("wte", [vocab, embed],
                ["mp", None] if b.form == "reshape" else None)
    wpe = b.arg("wpe", [seq, embed])
    layers = []
    for i in range(args.layers):
        sfx = "_%d" % i
        layers.append(dict(
            ln1_g=b.arg("ln1_g" + sfx, [embed]),
            ln1_b=b.arg("ln1_b" + sfx, [embed]),
            attn=attention_weights(b, args.heads, head_dim, sfx),
            ln2_g=b.arg("ln2_g" + sfx, [embed]),
            ln2_b=b.arg("ln2_b" + sfx, [embed]),
            w1=b.arg("w1" + sfx, [embed, ffn], [None, "mp"]),
            w2=b.arg("w2" + sfx, [ffn, embed], ["mp", None])))
    lnf_g = b.arg("lnf_g", [embed])
    lnf_b = b.arg("lnf_b", [embed])
    head = b.arg("w_head", [embed, vocab], [None, "mp"])

    # Token embedding (vocab-parallel when the table is split on the
    # vocabulary: each device looks up its rows, the sum over devices is the
    # result) plus the position embedding.
    ident3 = identity_map(3)
    if b.form == "einsum":
        # Masked lookup sum_v [ids == v] * wte[v, :]: upstream `shard` has no
        # sharding model for tensor.gather. v comes from linalg.index, which
        # upstream keeps local when v is split, so this form does not split
        # the table (see wte).
        tok = b.generic(
            [(ids, [bsz, seq], affine_map(4, ["d0", "d1"]), "i64"),
             (wte, [vocab, embed], affine_map(4, ["d3", "d2"]))],
            [bsz, seq, embed], affine_map(4, ["d0", "d1", "d2"]),
            ["parallel"] * 3 + ["reduction"],
            ["%v = linalg.index 3 : index",
             "%vi = arith.index_cast %v : index to i64",
             "%hit = arith.cmpi eq, %in0, %vi : i64",
             "%c_zero = arith.constant " + fconst(0.0) + " : f32",
             "%row = arith.select %hit, %in1, %c_zero : f32",
             "%r = arith.addf %out, %row : f32", "linalg.yield %r : f32"],
            init=b.zeros([bsz, seq, embed]), prefix="tok_emb")
    else:
        ids3 = b.expand(ids, [bsz, seq], [bsz, seq, 1], [[0], [1, 2]],
                        prefix="ids", elt="i64")
        tok = b.fresh("tok_emb")
        b.emit("%s = tensor.gather %s[%s] gather_dims([0]) : (%s, %s) -> %s" %
               (tok, wte, ids3, ttype([vocab, embed]),
                ttype([bsz, seq, 1], "i64"), ttype([bsz, seq, embed])))
    x = b.generic([(tok, [bsz, seq, embed], ident3),
                   (wpe, [seq, embed], affine_map(3, ["d1", "d2"]))],
                  [bsz, seq, embed], ident3, ["parallel"] * 3,
                  ["%r = arith.addf %in0, %in1 : f32",
                   "linalg.yield %r : f32"], prefix="emb")
    # The residual stream: [B*S, E] in the reshape form, [B, S, E] otherwise.
    if b.form == "einsum":
        lead = [bsz, seq]
    else:
        lead = [tokens]
        x = b.collapse(x, [bsz, seq, embed], [tokens, embed], [[0, 1], [2]],
                       prefix="resid")
    shape = lead + [embed]
    for layer in layers:
        h = b.layer_norm(x, shape, layer["ln1_g"], layer["ln1_b"])
        a = b.attention(h, bsz, seq, args.heads, head_dim, *layer["attn"],
                        causal=args.causal)
        x = b.add(x, a, shape, prefix="resid")
        h = b.layer_norm(x, shape, layer["ln2_g"], layer["ln2_b"])
        m = b.mlp(h, lead, embed, ffn, layer["w1"], layer["w2"])
        x = b.add(x, m, shape, prefix="resid")
    h = b.layer_norm(x, shape, lnf_g, lnf_b)
    logits = b.dense(h, lead, embed, vocab, head, prefix="logits")
    if b.form == "reshape":
        logits = b.expand(logits, [tokens, vocab], [bsz, seq, vocab],
                          [[0, 1], [2]], prefix="logits")
    return logits, ttype([bsz, seq, vocab])


def parse_args(argv):
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--annotate", choices=["dist", "shard", "none"],
                        default="dist",
                        help="annotation flavour (default: dist)")
    common.add_argument("--mesh", default="dp=2,mp=4",
                        help="mesh axes NAME=SIZE,... (default: dp=2,mp=4)")
    common.add_argument("--form", choices=["reshape", "einsum"],
                        help="reshape: linalg.matmul/batch_matmul with "
                        "expand/collapse_shape, transpose, linalg.softmax and "
                        "tensor.gather (what importers produce); einsum: only "
                        "linalg.generic contractions/reductions, which "
                        "upstream sharding-propagation supports end to end "
                        "(default: einsum with --annotate shard, else "
                        "reshape)")
    common.add_argument("--params", action="store_true",
                        help="mark the weights dist.param (trainable: what "
                        "--dist-training-step and `autoshard train` update)")
    common.add_argument("--dp-axis", default="dp",
                        help="mesh axis splitting the batch, or 'none'")
    common.add_argument("--mp-axis", default="mp",
                        help="mesh axis splitting heads/hidden/vocab, or "
                        "'none'")

    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="model", required=True)

    p = sub.add_parser("mlp", parents=[common],
                       help="L-layer Megatron MLP: Y = gelu(X W1) W2")
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--hidden", type=int, default=16)
    p.add_argument("--ffn", type=int, default=64)
    p.set_defaults(gen=gen_mlp)

    p = sub.add_parser("attention", parents=[common],
                       help="one multi-head self-attention block")
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--seq", type=int, default=8)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--head-dim", type=int, default=8)
    p.add_argument("--causal", action=argparse.BooleanOptionalAction,
                   default=False, help="add a causal mask (default: off)")
    p.set_defaults(gen=gen_attention)

    p = sub.add_parser("gpt", parents=[common],
                       help="GPT-style decoder stack with embedding and LM "
                       "head")
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--vocab", type=int, default=64)
    p.add_argument("--seq", type=int, default=8)
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--embed", type=int, default=32)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--ffn", type=int, default=0,
                   help="MLP hidden size (default: 4 * embed)")
    p.add_argument("--causal", action=argparse.BooleanOptionalAction,
                   default=True, help="add a causal mask (default: on)")
    p.set_defaults(gen=gen_gpt)
    return parser.parse_args(argv)


def main(argv):
    args = parse_args(argv)
    try:
        mesh = Mesh(args.mesh, args.dp_axis, args.mp_axis)
        form = args.form or ("einsum" if args.annotate == "shard"
                             else "reshape")
        b = Builder(args.annotate, mesh, form, args.params)
        result, result_type = args.gen(args, b)
    except GenError as e:
        sys.stderr.write("gen_models.py: error: %s\n" % e)
        return 1
    sys.stdout.write(header(argv))
    sys.stdout.write(b.module(result, result_type))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
