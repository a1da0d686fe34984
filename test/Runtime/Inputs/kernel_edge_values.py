#!/usr/bin/env python3
"""Writes the differential audit of compiled loop nests to stdout:
test/Runtime/kernel-edge-values.mlir's program (without its comment header),
or with --subset the exact-op subset embedded in unittests/Kernels/
KernelCompilerTest.cpp (ScalarEdgeValuesExact: no math functions, no
bf16/f16, which the GPU computes within an ulp). kernel-edge-values.mlir
checks that both copies are this script's output.

Every op runs over edge values of its types: binary ops over every pair
(a 2-D nest over x and y), unary ops over the list; ops on the same inputs
share one linalg.generic.
"""
import sys
I32 = [0, 1, -1, 2, 7, 31, 32, 33, 63, 64, 65, -31, -32, -33, 1000, 2**31-1, -2**31, 0x55555555]
I64 = [0, 1, -1, 31, 32, 63, 64, 65, -64, 2**63-1, -2**63, 2**32, -2**32-1, 2**53+1, 2**62+2**38+1, -(2**62+2**38+1), 2**63-2**39-1, (2**64-2**39-1)-2**64, 0x7fffff7fffffffff]
F = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 0.49999997, float('nan'), -float('nan'), float('inf'), -float('inf'),
     2.0**31, -2.0**31, 2.0**31 - 64, 2.0**32, 4e9, -4e9, 1e10, -1e10, 2.0**63, -2.0**63, 9.21e18, -9.21e18, 2.0**64, 1.8e19, 1e30, -1e30,
     1e-40, -1e-40, 3.4e38, 1e300, 5e-324, 4503599627370497.0, 88.7, -103.0, 710.0, 0.7853981633974483, 1e-8]
def fmt(v, t):
    import numpy as np
    if t.startswith('i') or t == 'index':
        return str(v)
    with np.errstate(all='ignore'):
        if t == 'f64':
            return '0x%016X' % int(np.array([v], dtype=np.float64).view(np.uint64)[0])
        f = np.array([v], dtype=np.float32)
        if t == 'f32':
            return '0x%08X' % int(f.view(np.uint32)[0])
        if t == 'f16':
            return '0x%04X' % int(f.astype(np.float16).view(np.uint16)[0])
        b = int(f.view(np.uint32)[0])
        if v != v:
            return '0x%04X' % (b >> 16 | 0x40)
        # round to nearest even to bf16
        b = (b + 0x7FFF + ((b >> 16) & 1)) >> 16
        return '0x%04X' % b

ops = []  # (name, body, in types, out type, arity)
def dense(vals, t):
    return 'dense<[' + ', '.join(fmt(v, t) for v in vals) + ']> : tensor<%dx%s>' % (len(vals), t)

entries = []
ALL = []
CONSTS = {}
def const(vals, t):
    key = (tuple(map(repr, vals)), t)
    if key not in CONSTS:
        CONSTS[key] = ('%%c%d' % len(CONSTS), '  %%c%d = arith.constant %s' % (len(CONSTS), dense(vals, t)))
    return CONSTS[key][0]
def entry(name, ins, ops_):
    # ins: [(vals, t)] (1 or 2); unary: 1-D over x; binary: 2-D over x, y
    if len(ins) == 2 and ins[0][0] is not None:
        pass
    for (label, body, rt, nargs) in ops_:
        ALL.append((label, body, rt, nargs, ins))
def pairs(a, b=None):
    return a, (a if b is None else b)
# integer binary ops
for t, vals in (('i32', I32), ('i64', I64)):
    xs, ys = pairs(vals)
    ops_ = []
    for op in ['addi', 'subi', 'muli', 'maxsi', 'minsi', 'maxui', 'minui', 'andi', 'ori', 'xori', 'shli', 'shrsi', 'shrui']:
        ops_.append((op + ' ' + t, ['%%v = arith.%s %%x, %%y : %s' % (op, t)], t, 2))
    for p in ['eq', 'ne', 'slt', 'sle', 'sgt', 'sge', 'ult', 'ule', 'ugt', 'uge']:
        ops_.append(('cmpi %s %s' % (p, t), ['%%v = arith.cmpi %s, %%x, %%y : %s' % (p, t)], 'i1', 2))
    entry('int_' + t, [(xs, t), (ys, t)], ops_)
# integer unary / casts
ops_ = [('absi i32', ['%v = math.absi %x : i32'], 'i32', 1),
        ('extsi i32->i64', ['%v = arith.extsi %x : i32 to i64'], 'i64', 1),
        ('extui i32->i64', ['%v = arith.extui %x : i32 to i64'], 'i64', 1),
        ('trunci i32->i1', ['%v = arith.trunci %x : i32 to i1'], 'i1', 1),
        ('index_cast i32', ['%i = arith.index_cast %x : i32 to index', '%v = arith.index_cast %i : index to i64'], 'i64', 1),
        ('index_castui i32', ['%i = arith.index_castui %x : i32 to index', '%v = arith.index_cast %i : index to i64'], 'i64', 1)]
for ft in ('f32', 'f64', 'bf16', 'f16'):
    ops_.append(('sitofp i32->' + ft, ['%%v = arith.sitofp %%x : i32 to %s' % ft], ft, 1))
    ops_.append(('uitofp i32->' + ft, ['%%v = arith.uitofp %%x : i32 to %s' % ft], ft, 1))
entry('int_unary_i32', [(I32, 'i32')], ops_)
ops_ = [('absi i64', ['%v = math.absi %x : i64'], 'i64', 1),
        ('trunci i64->i32', ['%v = arith.trunci %x : i64 to i32'], 'i32', 1)]
for ft in ('f32', 'f64', 'bf16', 'f16'):
    ops_.append(('sitofp i64->' + ft, ['%%v = arith.sitofp %%x : i64 to %s' % ft], ft, 1))
    ops_.append(('uitofp i64->' + ft, ['%%v = arith.uitofp %%x : i64 to %s' % ft], ft, 1))
entry('int_unary_i64', [(I64, 'i64')], ops_)
# i1
B = [0, 1]
xs, ys = pairs(B)
ops_ = [('extsi i1->i32', ['%v = arith.extsi %x : i1 to i32'], 'i32', 1),
        ('extui i1->i32', ['%v = arith.extui %x : i1 to i32'], 'i32', 1),
        ('sitofp i1->f32', ['%v = arith.sitofp %x : i1 to f32'], 'f32', 1),
        ('uitofp i1->f32', ['%v = arith.uitofp %x : i1 to f32'], 'f32', 1)]
for op in ['addi', 'subi', 'muli', 'maxsi', 'minsi', 'maxui', 'minui', 'andi', 'ori', 'xori', 'shli', 'shrsi', 'shrui']:
    ops_.append((op + ' i1', ['%%v = arith.%s %%x, %%y : i1' % op], 'i1', 2))
for p in ['slt', 'sle', 'sgt', 'sge', 'ult', 'ugt']:
    ops_.append(('cmpi %s i1' % p, ['%%v = arith.cmpi %s, %%x, %%y : i1' % p], 'i1', 2))
entry('bool', [(xs, 'i1'), (ys, 'i1')], ops_)
# float
for t in ('f32', 'f64', 'bf16', 'f16'):
    xs, ys = pairs(F)
    ops_ = []
    for op in ['addf', 'subf', 'mulf', 'divf', 'remf', 'maximumf', 'minimumf', 'maxnumf', 'minnumf']:
        ops_.append((op + ' ' + t, ['%%v = arith.%s %%x, %%y : %s' % (op, t)], t, 2))
    for op in ['atan2', 'powf']:
        ops_.append((op + ' ' + t, ['%%v = math.%s %%x, %%y : %s' % (op, t)], t, 2))
    ops_.append(('fma ' + t, ['%%v = math.fma %%x, %%y, %%x : %s' % t], t, 2))
    for p in ['false', 'oeq', 'ogt', 'oge', 'olt', 'ole', 'one', 'ord', 'ueq', 'ugt', 'uge', 'ult', 'ule', 'une', 'uno', 'true']:
        ops_.append(('cmpf %s %s' % (p, t), ['%%v = arith.cmpf %s, %%x, %%y : %s' % (p, t)], 'i1', 2))
    ops_.append(('select ' + t, ['%c = arith.cmpf olt, %x, %y : ' + t, '%v = arith.select %c, %x, %y : ' + t], t, 2))
    entry('float_' + t, [(xs, t), (ys, t)], ops_)
    ops_ = [('negf ' + t, ['%%v = arith.negf %%x : %s' % t], t, 1)]
    for op in ['absf', 'sqrt', 'rsqrt', 'exp', 'exp2', 'expm1', 'log', 'log2', 'log1p', 'tanh', 'sin', 'cos', 'tan', 'erf', 'atan', 'floor', 'ceil', 'round', 'roundeven', 'trunc']:
        ops_.append((op + ' ' + t, ['%%v = math.%s %%x : %s' % (op, t)], t, 1))
    for it in ('i32', 'i64'):
        ops_.append(('fptosi %s->%s' % (t, it), ['%%v = arith.fptosi %%x : %s to %s' % (t, it)], it, 1))
        ops_.append(('fptoui %s->%s' % (t, it), ['%%v = arith.fptoui %%x : %s to %s' % (t, it)], it, 1))
    if t == 'f32':
        ops_.append(('extf f32->f64', ['%v = arith.extf %x : f32 to f64'], 'f64', 1))
        ops_.append(('truncf f32->bf16', ['%v = arith.truncf %x : f32 to bf16'], 'bf16', 1))
        ops_.append(('truncf f32->f16', ['%v = arith.truncf %x : f32 to f16'], 'f16', 1))
    if t == 'f64':
        ops_.append(('truncf f64->f32', ['%v = arith.truncf %x : f64 to f32'], 'f32', 1))
        ops_.append(('truncf f64->bf16', ['%v = arith.truncf %x : f64 to bf16'], 'bf16', 1))
        ops_.append(('truncf f64->f16', ['%v = arith.truncf %x : f64 to f16'], 'f16', 1))
    if t in ('bf16', 'f16'):
        ops_.append(('extf %s->f32' % t, ['%%v = arith.extf %%x : %s to f32' % t], 'f32', 1))
        ops_.append(('extf %s->f64' % t, ['%%v = arith.extf %%x : %s to f64' % t], 'f64', 1))
    entry('funary_' + t, [(F, t)], ops_)


# --subset: the ops whose results MLIR defines exactly or where kernels
# compute the interpreter's value (shifts, float<->int conversions, signed
# comparisons and min/max), in the 32/64-bit types only.
KEEP_OPS = ('shli', 'shrsi', 'shrui', 'maxsi', 'minsi', 'fptosi', 'fptoui',
            'maximumf', 'minimumf', 'maxnumf', 'minnumf', 'extsi', 'sitofp',
            'uitofp')
if '--subset' in sys.argv[1:]:
    ALL[:] = [a for a in ALL
              if (a[0].split()[0] in KEEP_OPS or a[0].startswith('cmpi s'))
              and not any(h in a[0] for h in ('bf16', 'f16'))]

lines = []
results = []
groups = {}
for (label, body, rt, nargs, ins) in ALL:
    names = tuple(const(vals, t) for vals, t in ins[:nargs])
    groups.setdefault(names, []).append((label, body, rt, nargs, ins))
for g, (names, ops_) in enumerate(groups.items()):
    nargs = ops_[0][3]; ins = ops_[0][4]
    if nargs == 1:
        n = len(ins[0][0]); shape = '%d' % n; it = '"parallel"'; m1 = '#x'
        ins_t = 'tensor<%dx%s>' % (n, ins[0][1])
        rtypes = ['tensor<%dx%s>' % (n, o[2]) for o in ops_]
        maps = ', '.join(['#x'] * (1 + len(ops_)))
    else:
        n, m = len(ins[0][0]), len(ins[1][0]); it = '"parallel", "parallel"'
        rtypes = ['tensor<%dx%dx%s>' % (n, m, o[2]) for o in ops_]
        ins_t = 'tensor<%dx%s>, tensor<%dx%s>' % (n, ins[0][1], m, ins[1][1])
        maps = ', '.join(['#i', '#j'] + ['#ij'] * len(ops_))
    bb = ', '.join('%%%s: %s' % ('xy'[a], ins[a][1]) for a in range(nargs))
    outs = []
    for k, (label, body, rt, _, _) in enumerate(ops_):
        lines.append('  // %d: %s' % (len(results) + k, label))
    for k, t in enumerate(rtypes):
        lines.append('  %%e%d_%d = tensor.empty() : %s' % (g, k, t))
    lines.append('  %%r%d:%d = linalg.generic {indexing_maps = [%s], iterator_types = [%s]}' % (g, len(ops_), maps, it))
    lines.append('      ins(%s : %s)' % (', '.join(names), ins_t))
    lines.append('      outs(%s : %s) {' % (', '.join('%%e%d_%d' % (g, k) for k in range(len(ops_))), ', '.join(rtypes)))
    lines.append('  ^bb0(%s, %s):' % (bb, ', '.join('%%o%d: %s' % (k, o[2]) for k, o in enumerate(ops_))))
    vs = []
    for k, (label, body, rt, _, _) in enumerate(ops_):
        for b in body:
            b = b.replace('%v ', '%%v%d ' % k).replace('%c ', '%%c%d ' % k).replace('%c,', '%%c%d,' % k).replace('%i ', '%%i%d ' % k).replace('%i :', '%%i%d :' % k)
            lines.append('    ' + b)
        vs.append('%%v%d' % k)
    lines.append('    linalg.yield %s : %s' % (', '.join(vs), ', '.join(o[2] for o in ops_)))
    lines.append('  } -> (%s)' % ', '.join(rtypes))
    for k, t in enumerate(rtypes):
        results.append(('%%r%d#%d' % (g, k), t))
out = sys.stdout
out.write('#x = affine_map<(i) -> (i)>\n#i = affine_map<(i, j) -> (i)>\n#j = affine_map<(i, j) -> (j)>\n#ij = affine_map<(i, j) -> (i, j)>\n')
out.write('func.func @main() -> (%s) {\n' % ', '.join(t for _, t in results))
for name, line in CONSTS.values():
    out.write(line + '\n')
out.write('\n'.join(lines) + '\n')
out.write('  return %s\n      : %s\n}\n' % (', '.join(r for r, _ in results), ', '.join(t for _, t in results)))
