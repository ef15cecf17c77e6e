"""
Tests of the lean eager launch (kernels/backend.py, LeanLaunch): its key is at least as
fine as Triton's own specialisation (on the CPU, against Triton's specialiser); with
Triton's side faked, on the CPU, it hands the C launcher every parameter in order (defaults,
constexprs, meta, an autotuner's config) and leaves hooks to Triton; and on CUDA it
launches what kernel[grid](...) would: the same results, a new compiled kernel
wherever Triton would compile one, Triton's path where launch hooks are set, and the
autotuner's choice with a grid computed from it. Every other kernel test also runs through
it on CUDA (the ops launch that way in eager mode).
"""
import itertools

import pytest
import torch

import kernels.backend as backend
from kernels.backend import triton, tl, TRITON_AVAILABLE, INTERPRET

pytestmark = pytest.mark.skipif(not TRITON_AVAILABLE, reason="needs Triton")
cuda = pytest.mark.skipif(not torch.cuda.is_available() or INTERPRET, reason="the lean launch runs compiled kernels on CUDA")


def test_key_is_as_fine_as_tritons():
    """Two arguments with one key are specialised alike by Triton (native_specialize_impl)."""
    from triton._C.libtriton import native_specialize_impl
    from triton.backends.compiler import BaseBackend
    buffer = torch.zeros(64)
    args = [0, 1, 2, 15, 16, 17, 32, -1, -16, 2**31 - 16, 2**31, 2**32, 2**40 + 1, 2**63 - 16, 2**63, 2**64 - 1,
            0.0, 1.0, -2.5, 1e300, True, False, None,
            buffer, buffer[1:], buffer[4:], buffer.half(), buffer.half()[8:], buffer.half()[3:], buffer.bfloat16()]
    spec = lambda a: native_specialize_impl(BaseBackend, a, False, True, True)
    for a, b in itertools.combinations(args, 2):
        if backend._specialised(a, False) == backend._specialised(b, False):
            assert spec(a) == spec(b), (a, b)
    assert backend._specialised(16, True) == 16  # constexprs and an autotuner's key: by value


if TRITON_AVAILABLE:
    @triton.jit
    def _axpb_kernel(X,  # (n,) in
                     Y,  # (n,) out: a x + b
                     n, a, b: tl.constexpr, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(X + offs, mask=offs < n).to(tl.float32)
        tl.store(Y + offs, (a * x + b).to(Y.dtype.element_ty), mask=offs < n)

    _axpb_tuned = triton.autotune([triton.Config({'BLOCK': 64}, num_warps=2), triton.Config({'BLOCK': 256}, num_warps=4)],
                                  key=['n'])(_axpb_kernel)


class _FakeTriton:
    """Triton's side of a LeanLaunch, faked so the CPU runs its path: kernel[grid](...) records the
    call and returns a 'compiled kernel' whose C launcher records what it is given."""
    def __init__(self, best=None):
        self.calls, self.launched = [], []
        self.best_config = triton.Config(best or {}, num_warps=4)
        self.compiled = type('Compiled', (), dict(run=lambda _, *a: self.launched.append(a), function='fn',
                                                  packed_metadata='meta'))()

    def __getitem__(self, grid):
        return lambda *args, **meta: self.calls.append((grid, args, meta)) or self.compiled


if TRITON_AVAILABLE:
    def _with_default(X, n, scale=2.0, BLOCK: tl.constexpr = 16):
        pass


@pytest.fixture
def fake_cuda(monkeypatch):
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    monkeypatch.setattr(torch._C, "_cuda_getCurrentRawStream", lambda device: 1234, raising=False)


def test_lean_launch_hands_the_c_launcher_every_parameter_in_order(fake_cuda, monkeypatch):
    from triton.runtime.jit import JITFunction
    lean = backend.LeanLaunch(JITFunction(_axpb_kernel.fn))  # a real JIT function, even under the interpreter
    lean.kernel = fake = _FakeTriton()
    x, y = torch.zeros(100), torch.zeros(100)
    for _ in range(2):
        lean[(3,)](x, y, 100, 2.0, 1, BLOCK=64)  # the constexpr b passed positionally
    assert len(fake.calls) == 1 and fake.launched == [(3, 1, 1, 1234, 'fn', 'meta', None, None, None, x, y, 100, 2.0, 1, 64)]
    lean[(3,)](x, y, 100, 2.0, 3, BLOCK=64)  # another constexpr value: Triton's path first
    lean[(3,)](x, y, 100, 2.0, 1, BLOCK=32)  # another meta value
    assert len(fake.calls) == 3 and len(fake.launched) == 1
    hook = lambda metadata: None
    triton.knobs.runtime.launch_enter_hook.add(hook)
    try:
        lean[(3,)](x, y, 100, 2.0, 1, BLOCK=64)
    finally:
        triton.knobs.runtime.launch_enter_hook.remove(hook)
    monkeypatch.setattr(lean.jit, "pre_run_hooks", [hook])
    lean[(3,)](x, y, 100, 2.0, 1, BLOCK=64)
    assert len(fake.calls) == 5 and len(fake.launched) == 1  # hooks: Triton's path
    defaults = backend.LeanLaunch(JITFunction(_with_default))
    defaults.kernel = fake = _FakeTriton()
    for _ in range(2):
        defaults[(1, 2)](x, 5)
    assert fake.launched == [(1, 2, 1, 1234, 'fn', 'meta', None, None, None, x, 5, 2.0, 16)]


def test_lean_launch_takes_the_autotuners_config_and_grid(fake_cuda):
    from triton.runtime.jit import JITFunction
    tuned = triton.autotune([triton.Config({'BLOCK': 64}), triton.Config({'BLOCK': 256})], key=['n'])(
        JITFunction(_axpb_kernel.fn))
    lean = backend.LeanLaunch(tuned)
    lean.kernel = fake = _FakeTriton(dict(BLOCK=256))
    x = torch.zeros(1000)
    grid = lambda meta: (triton.cdiv(meta['n'], meta['BLOCK']),)
    for n in (1000, 1000, 999, 999):  # the autotuner's key by value: 999 is a new key, though Triton's JIT would not care
        lean[grid](x, x, n, 4.0, 2)
    assert len(fake.calls) == 2
    assert fake.launched == [(4, 1, 1, 1234, 'fn', 'meta', None, None, None, x, x, n, 4.0, 2, 256) for n in (1000, 999)]


@pytest.fixture
def runs(monkeypatch):
    """The JIT function's runs (Triton's own launches) as they happen: a list of n."""
    seen = []
    run = _axpb_kernel.run
    monkeypatch.setattr(_axpb_kernel, "run", lambda *args, **kw: seen.append(args[2]) or run(*args, **kw))
    return seen


def axpb(lean, x, a, b, block=None, grid=None):
    y = torch.empty_like(x)
    meta = {} if block is None else dict(BLOCK=block)
    lean[grid or (triton.cdiv(x.numel(), block),)](x, y, x.numel(), a, b, **meta)
    return y


@cuda
def test_lean_launch_runs_what_triton_would(runs):
    lean = backend.LeanLaunch(_axpb_kernel)
    x = torch.randn(1000, device="cuda")
    for _ in range(3):
        torch.testing.assert_close(axpb(lean, x, 2.0, 1, 128), 2 * x + 1, rtol=0, atol=0)
    assert runs == [1000] and len(lean.compiled) == 1  # compiled once, then launched directly
    # each of these is specialised differently by Triton: a new entry, launched by Triton first
    cases = [(x[1:], 2.0, 1, 128), (x[:1], 2.0, 1, 128), (x[:992], 2.0, 1, 128), (x.half(), 2.0, 1, 128),
             (x, 2.0, 3, 128), (x, 2.0, 1, 64)]
    for i, (xi, a, b, block) in enumerate(cases):
        for _ in range(2):
            torch.testing.assert_close(axpb(lean, xi, a, b, block), (a * xi.float() + b).to(xi.dtype), rtol=0, atol=0)
        assert len(runs) == 2 + i and len(lean.compiled) == 2 + i
    torch.testing.assert_close(axpb(lean, x, -0.5, 1, 128), -0.5 * x + 1, rtol=0, atol=0)  # a float: not specialised
    assert len(runs) == 1 + len(cases) and len(lean.compiled) == 1 + len(cases)


@cuda
def test_lean_launch_leaves_hooks_their_launches(runs):
    lean = backend.LeanLaunch(_axpb_kernel)
    x = torch.randn(300, device="cuda")
    axpb(lean, x, 1.0, 0, 128)
    hooked = []
    triton.knobs.runtime.launch_enter_hook.add(hooked.append)
    try:
        torch.testing.assert_close(axpb(lean, x, 1.0, 0, 128), x, rtol=0, atol=0)
    finally:
        triton.knobs.runtime.launch_enter_hook.remove(hooked.append)
    assert len(hooked) == 1 and len(runs) == 2


@cuda
def test_lean_launch_takes_the_autotuners_choice(runs):
    lean = backend.LeanLaunch(_axpb_tuned)
    grid = lambda meta: (triton.cdiv(meta['n'], meta['BLOCK']),)  # from the chosen config and a named argument
    for n in (5000, 70, 5000, 70):
        x = torch.randn(n, device="cuda")
        torch.testing.assert_close(axpb(lean, x, 4.0, 2, grid=grid), 4 * x + 2, rtol=0, atol=0)  # 4 x exact: one rounding
    assert len(lean.compiled) == 2  # one per autotuner key
    chosen = {config.kwargs['BLOCK'] for config in _axpb_tuned.cache.values()}
    assert {rest for *_, rest in lean.compiled.values()} == {(block,) for block in chosen}  # the config's BLOCK


def test_launch_is_wrap_triton_while_tracing():
    """Under torch.compile's tracing (wrap_triton enabled) launch() gives wrap_triton's
    traceable kernel; in eager launchers (disabled), the lean launch or, in the CPU
    interpreter, the kernel itself."""
    from torch._higher_order_ops.triton_kernel_wrap import TraceableTritonKernelWrapper
    from torch._library.triton import set_wrap_triton_enabled
    with set_wrap_triton_enabled(True):  # (the interpreter's wrap_triton gives the kernel itself)
        traced = backend.launch(_axpb_kernel)
        assert traced is _axpb_kernel if INTERPRET else isinstance(traced, TraceableTritonKernelWrapper)
    with set_wrap_triton_enabled(False):
        eager = backend.launch(_axpb_kernel)
        assert eager is (_axpb_kernel if INTERPRET else backend.launch(_axpb_kernel))
        assert INTERPRET or isinstance(eager, backend.LeanLaunch)
