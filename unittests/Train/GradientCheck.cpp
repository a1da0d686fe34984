//===- GradientCheck.cpp - VJP rules against finite differences ----------===//

#include "GradientCheck.h"

#include "autoshard/InitAll.h"
#include "autoshard/Lower/ProgramLoader.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <sstream>

using namespace mlir;

namespace autoshard::gradcheck {

namespace {
/// Collects the diagnostics emitted on a context while it lives.
struct DiagCapture {
  std::string text;
  ScopedDiagnosticHandler handler;
  explicit DiagCapture(MLIRContext &ctx)
      : handler(&ctx, [this](Diagnostic &d) {
          llvm::raw_string_ostream os(text);
          os << d.getLocation() << ": " << d << "\n";
          for (Diagnostic &note : d.getNotes())
            os << "  note: " << note.getLocation() << ": " << note << "\n";
          return success();
        }) {}
};

bool envFlag(const char *name) {
  const char *v = std::getenv(name);
  return v && *v && std::string(v) != "0";
}

/// "[1, 2]" for element `i` of `shape`.
std::string multiIndex(const rt::Shape &shape, int64_t i) {
  std::vector<int64_t> idx(shape.size());
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    idx[d] = i % shape[d];
    i /= shape[d];
  }
  std::string s = "[";
  for (size_t d = 0; d < idx.size(); ++d)
    s += (d ? ", " : "") + std::to_string(idx[d]);
  return s + "]";
}

std::string fmt(double v) {
  std::ostringstream os;
  os.precision(12);
  os << v;
  return os.str();
}
} // namespace

std::unique_ptr<MLIRContext> makeContext() {
  DialectRegistry registry;
  registerAllDialects(registry);
  auto ctx = std::make_unique<MLIRContext>(registry,
                                           MLIRContext::Threading::DISABLED);
  ctx->loadAllAvailableDialects();
  return ctx;
}

OwningOpRef<ModuleOp> parse(MLIRContext &ctx, const std::string &source,
                            std::string &diag) {
  DiagCapture capture(ctx);
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(source, &ctx);
  diag = capture.text;
  return module;
}

bool runPipeline(ModuleOp module, const std::string &pipeline,
                 std::string &diag) {
  static std::once_flag once;
  std::call_once(once, [] { registerAllPasses(); });
  MLIRContext *ctx = module.getContext();
  DiagCapture capture(*ctx);
  PassManager pm(ctx);
  std::string parseErr;
  llvm::raw_string_ostream errs(parseErr);
  if (failed(parsePassPipeline(pipeline, pm, errs))) {
    diag = "cannot parse pipeline '" + pipeline + "': " + parseErr;
    return false;
  }
  bool ok = succeeded(pm.run(module));
  diag = capture.text;
  return ok;
}

std::unique_ptr<Runner> Runner::create(ModuleOp module, StringRef entry,
                                       std::string &diag) {
  DiagCapture capture(*module.getContext());
  FailureOr<rt::Program> program = lowerToProgram(module, entry);
  diag = capture.text;
  if (failed(program))
    return nullptr;
  auto r = std::unique_ptr<Runner>(new Runner());
  r->program = std::make_unique<rt::Program>(std::move(*program));
  try {
    r->backend = rt::createCpuBackend();
    r->comm = rt::createLocalCommunicator(r->program->mesh);
    r->executor =
        std::make_unique<rt::Executor>(*r->program, *r->backend, *r->comm);
  } catch (const rt::Error &e) {
    diag += std::string("runtime: ") + e.what() + "\n";
    return nullptr;
  }
  return r;
}

std::vector<rt::Tensor> Runner::run(const std::vector<rt::Tensor> &inputs) {
  return executor->run(inputs);
}

rt::DType dtypeOf(Type type) {
  Type elem = cast<RankedTensorType>(type).getElementType();
  if (elem.isF64())
    return rt::DType::F64;
  if (elem.isF32())
    return rt::DType::F32;
  if (elem.isInteger(64) || elem.isIndex())
    return rt::DType::I64;
  if (elem.isInteger(32))
    return rt::DType::I32;
  return rt::DType::I1;
}

rt::Shape shapeOf(Type type) {
  auto t = cast<RankedTensorType>(type);
  return rt::Shape(t.getShape().begin(), t.getShape().end());
}

rt::Tensor randomFloats(rt::DType type, const rt::Shape &shape,
                        std::mt19937_64 &rng, double lo, double hi) {
  rt::Tensor t(type, shape);
  std::uniform_real_distribution<double> dist(lo, hi);
  for (int64_t i = 0; i < t.getNumElements(); ++i)
    t.setFromDouble(i, dist(rng));
  return t;
}

rt::Tensor randomInts(rt::DType type, const rt::Shape &shape,
                      std::mt19937_64 &rng, int64_t bound) {
  rt::Tensor t(type, shape);
  std::uniform_int_distribution<int64_t> dist(0, bound - 1);
  for (int64_t i = 0; i < t.getNumElements(); ++i)
    t.setFromInt(i, dist(rng));
  return t;
}

double mseLoss(const rt::Tensor &y, const rt::Tensor &target) {
  double sum = 0;
  int64_t n = y.getNumElements();
  for (int64_t i = 0; i < n; ++i) {
    double d = y.getAsDouble(i) - target.getAsDouble(i);
    sum += d * d;
  }
  return sum / static_cast<double>(n);
}

double crossEntropyLoss(const rt::Tensor &logits, const rt::Tensor &labels) {
  int64_t classes = logits.getShape().back();
  int64_t positions = logits.getNumElements() / classes;
  double sum = 0;
  for (int64_t p = 0; p < positions; ++p) {
    double mx = -std::numeric_limits<double>::infinity();
    for (int64_t c = 0; c < classes; ++c)
      mx = std::max(mx, logits.getAsDouble(p * classes + c));
    double s = 0;
    for (int64_t c = 0; c < classes; ++c)
      s += std::exp(logits.getAsDouble(p * classes + c) - mx);
    int64_t label = labels.getAsInt(p);
    sum += mx + std::log(s) - logits.getAsDouble(p * classes + label);
  }
  return sum / static_cast<double>(positions);
}

bool checkGradients(const std::string &source, const CheckOptions &o) {
  auto failWith = [&](const std::string &what) {
    ADD_FAILURE() << what << "\nmodel:\n" << source;
    return false;
  };
  std::unique_ptr<MLIRContext> ctx = makeContext();
  std::string diag;
  OwningOpRef<ModuleOp> module = parse(*ctx, source, diag);
  if (!module)
    return failWith("the model does not parse:\n" + diag);
  auto main = module->lookupSymbol<func::FuncOp>("main");
  if (!main)
    return failWith("the model has no @main");

  // Arguments of @main: parameters, float inputs, integer inputs.
  std::mt19937_64 rng(o.seed);
  std::vector<rt::Tensor> mainArgs;
  std::vector<unsigned> params, inputs;
  for (unsigned i = 0; i < main.getNumArguments(); ++i) {
    Type type = main.getArgumentTypes()[i];
    rt::DType dt = dtypeOf(type);
    bool param = bool(main.getArgAttr(i, "dist.param"));
    (param ? params : inputs).push_back(i);
    mainArgs.push_back(rt::isFloatDType(dt)
                           ? randomFloats(dt, shapeOf(type), rng, o.lo, o.hi)
                           : randomInts(dt, shapeOf(type), rng, o.intBound));
  }
  Type outType = main.getResultTypes()[0];
  rt::Shape outShape = shapeOf(outType);
  bool ce = o.loss == "cross_entropy";
  rt::Tensor labels;
  if (ce) {
    rt::Shape positions(outShape.begin(), outShape.end() - 1);
    labels = randomInts(rt::DType::I64, positions, rng, outShape.back());
  } else {
    labels = randomFloats(dtypeOf(outType), outShape, rng);
  }
  auto lossOf = [&](const rt::Tensor &y) {
    return ce ? crossEntropyLoss(y, labels) : mseLoss(y, labels);
  };

  // 1. The training step, SGD with lr = 1.
  OwningOpRef<ModuleOp> train = cast<ModuleOp>((*module)->clone());
  std::string pipeline =
      "dist-training-step{loss=" + o.loss + " optimizer=sgd lr=1}";
  if (!runPipeline(*train, pipeline, diag))
    return failWith(pipeline + " failed:\n" + diag);
  if (envFlag("AUTOSHARD_GRADCHECK_DUMP"))
    (*train)->print(llvm::errs());
  auto step = train->lookupSymbol<func::FuncOp>("train_step");
  if (!step)
    return failWith(pipeline + " built no @train_step");
  if (step.getNumResults() != 1 + params.size())
    return failWith("@train_step has " + std::to_string(step.getNumResults()) +
                    " results, expected 1 + " + std::to_string(params.size()));
  for (unsigned k = 0; k < params.size(); ++k) {
    auto tied = step.getResultAttrOfType<IntegerAttr>(k + 1, "dist.tied_arg");
    EXPECT_TRUE(tied && tied.getInt() == k)
        << "result " << k + 1 << " of @train_step is not tied to argument "
        << k;
  }
  std::unique_ptr<Runner> stepRun = Runner::create(*train, "train_step", diag);
  if (!stepRun) {
    std::string ir;
    llvm::raw_string_ostream os(ir);
    (*train)->print(os);
    return failWith("cannot lower @train_step:\n" + diag + "\n@train_step:\n" +
                    ir);
  }
  std::unique_ptr<Runner> fwd = Runner::create(*module, "main", diag);
  if (!fwd)
    return failWith("cannot lower @main:\n" + diag);

  std::vector<rt::Tensor> stepArgs;
  std::vector<rt::Tensor> before;
  for (unsigned a : params) {
    stepArgs.push_back(mainArgs[a].clone());
    before.push_back(mainArgs[a].clone());
  }
  for (unsigned a : inputs)
    stepArgs.push_back(mainArgs[a].clone());
  stepArgs.push_back(labels.clone());
  std::vector<rt::Tensor> stepOut, fwdOut;
  try {
    stepOut = stepRun->run(stepArgs);
  } catch (const rt::Error &e) {
    return failWith(std::string("running @train_step: ") + e.what());
  }
  try {
    fwdOut = fwd->run(mainArgs);
  } catch (const rt::Error &e) {
    return failWith(std::string("running @main: ") + e.what());
  }
  if (stepOut.size() != 1 + params.size())
    return failWith("@train_step returned " + std::to_string(stepOut.size()) +
                    " tensors");

  bool ok = true;
  std::string report;
  // The loss the step computed against the C++ one.
  double loss = lossOf(fwdOut[0]);
  double stepLoss = stepOut[0].getAsDouble(0);
  if (!(std::fabs(stepLoss - loss) <= 1e-12 + 1e-10 * std::fabs(loss))) {
    ok = false;
    report += "loss (result 0): got " + fmt(stepLoss) + ", expected " +
              fmt(loss) + " (" + o.loss + " of @main's output in C++)\n";
  }

  // 2./3. Central differences on every parameter element.
  for (unsigned k = 0; k < params.size(); ++k) {
    unsigned a = params[k];
    rt::Tensor &p = mainArgs[a];
    const rt::Tensor &updated = stepOut[k + 1];
    int bad = 0;
    std::string lines;
    double worst = 0, largestErr = 0, largestGrad = 0;
    for (int64_t i = 0; i < p.getNumElements(); ++i) {
      double v = p.getAsDouble(i);
      double lp, lm;
      try {
        p.setFromDouble(i, v + o.h);
        lp = lossOf(fwd->run(mainArgs)[0]);
        p.setFromDouble(i, v - o.h);
        lm = lossOf(fwd->run(mainArgs)[0]);
      } catch (const rt::Error &e) {
        return failWith(std::string("running @main: ") + e.what());
      }
      p.setFromDouble(i, v);
      double fd = (lp - lm) / (2 * o.h);
      double g = before[k].getAsDouble(i) - updated.getAsDouble(i);
      double err = std::fabs(g - fd);
      largestErr = std::max(largestErr, err);
      largestGrad = std::max(largestGrad, std::fabs(fd));
      if (!(err <= o.atol + o.rtol * std::fabs(fd))) {
        worst = std::max(worst, err);
        if (bad++ < 8)
          lines += "    element " + multiIndex(p.getShape(), i) + ": got " +
                   fmt(g) + ", expected " + fmt(fd) + "\n";
      }
    }
    if (envFlag("AUTOSHARD_GRADCHECK_VERBOSE"))
      llvm::errs() << "gradcheck: parameter " << k << " " << p.getTypeString()
                   << ": max |fd| " << largestGrad << ", max |g - fd| "
                   << largestErr << "\n";
    if (bad) {
      ok = false;
      report += "gradient of parameter " + std::to_string(k) + " (@main arg " +
                std::to_string(a) + ", " + p.getTypeString() +
                "): " + std::to_string(bad) + " of " +
                std::to_string(p.getNumElements()) +
                " elements differ from central differences (largest error " +
                fmt(worst) + "):\n" + lines;
    }
  }
  if (!ok)
    return failWith("gradient check (" + o.loss + ", seed " +
                    std::to_string(o.seed) + ") failed:\n" + report);
  return true;
}

std::string subst(std::string tmpl,
                  std::initializer_list<std::pair<std::string, std::string>>
                      values) {
  for (const auto &[key, value] : values) {
    std::string pattern = "${" + key + "}";
    for (size_t pos = tmpl.find(pattern); pos != std::string::npos;
         pos = tmpl.find(pattern, pos + value.size()))
      tmpl.replace(pos, pattern.size(), value);
  }
  EXPECT_EQ(tmpl.find("${"), std::string::npos)
      << "unsubstituted key in:\n" << tmpl;
  return tmpl;
}

std::string dims(const std::vector<int64_t> &shape) {
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "x" : "") + std::to_string(shape[i]);
  return s;
}

std::string f64Tensor(const std::vector<int64_t> &shape) {
  return shape.empty() ? "tensor<f64>" : "tensor<" + dims(shape) + "xf64>";
}

std::string affineMap(unsigned numDims, const std::vector<unsigned> &results) {
  std::string s = "affine_map<(";
  for (unsigned d = 0; d < numDims; ++d)
    s += (d ? ", d" : "d") + std::to_string(d);
  s += ") -> (";
  for (size_t i = 0; i < results.size(); ++i)
    s += (i ? ", d" : "d") + std::to_string(results[i]);
  return s + ")>";
}

std::string iterators(const std::string &kinds) {
  std::string s = "[";
  for (size_t i = 0; i < kinds.size(); ++i)
    s += std::string(i ? ", " : "") +
         (kinds[i] == 'p' ? "\"parallel\"" : "\"reduction\"");
  return s + "]";
}

} // namespace autoshard::gradcheck
