/* test_frameclass.c — frames as a person reads them (report/analysis/frameclass.c),
 * on stacks written down from real recordings: the frame names of the
 * H200 runs in docs/h200/ (a LoRA fine-tune's cross-entropy and cuBLAS
 * workspace blocks, an autograd-thread backward, the allocator shim's
 * trace tracker) and of the golden databases (tests/golden/db: a C
 * program, an embedded Python, a Python thread), and a gpuledger.Pool
 * call. Every class, short name and chain is an exact expectation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "frameclass.h"
#include "stack_text.h"

#define SP "/opt/torch/.venv/lib/python3.12/site-packages/"
#define TL SP "torch/lib/"
#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))
#define NATIVE(sym, mod) {sym, mod, NULL, 0, 0, 0}
#define UNNAMED(mod, off) {NULL, mod, NULL, 0, 0, off}
#define PY(func, file, line) {func, NULL, file, line, 1, 0}

#define DEVICE_MALLOC                                                                                                \
    NATIVE("c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc(signed char, unsigned long, "    \
           "CUstream_st*)",                                                                                          \
           TL "libc10_cuda.so")
#define NATIVE_MALLOC                                                                                                \
    NATIVE("c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator::malloc(void**, signed char, unsigned "  \
           "long, CUstream_st*)",                                                                                    \
           TL "libc10_cuda.so")
#define NATIVE_ALLOCATE                                                                                              \
    NATIVE("c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator::allocate(unsigned long)",               \
           TL "libc10_cuda.so")
#define EMPTY_GENERIC                                                                                                \
    NATIVE("at::detail::empty_generic(c10::ArrayRef<long>, c10::Allocator*, c10::DispatchKeySet, c10::ScalarType, " \
           "std::optional<c10::MemoryFormat>)",                                                                      \
           TL "libtorch_cpu.so")
#define EMPTY_CUDA                                                                                                   \
    NATIVE("at::detail::empty_cuda(c10::ArrayRef<long>, c10::ScalarType, std::optional<c10::Device>, "               \
           "std::optional<c10::MemoryFormat>)",                                                                      \
           TL "libtorch_cuda.so")
#define CREATE_OUT                                                                                                   \
    NATIVE("at::(anonymous namespace)::create_out(c10::ArrayRef<long>, c10::ArrayRef<long>, c10::TensorOptions "     \
           "const&)",                                                                                                \
           TL "libtorch_cuda.so")

/* A LoRA fine-tune's log_softmax output inside cross_entropy: 8 native
 * frames (GPULEDGER_TORCH_NATIVE_DEPTH), then Python. */
static const struct gl_fc_frame lora_loss[] = {
    DEVICE_MALLOC,
    NATIVE_MALLOC,
    NATIVE_ALLOCATE,
    EMPTY_GENERIC,
    EMPTY_CUDA,
    CREATE_OUT,
    NATIVE("at::(anonymous namespace)::structured_log_softmax_cuda_out_functional::set_output_raw_strided(long, "
           "c10::ArrayRef<long>, c10::ArrayRef<long>, c10::TensorOptions, c10::ArrayRef<at::Dimname>)",
           TL "libtorch_cuda.so"),
    NATIVE("at::meta::structured__log_softmax::meta(at::Tensor const&, long, bool)", TL "libtorch_cpu.so"),
    PY("cross_entropy", SP "torch/nn/functional.py", 3504),
    PY("fixed_cross_entropy", SP "transformers/loss/loss_utils.py", 40),
    PY("ForCausalLMLoss", SP "transformers/loss/loss_utils.py", 67),
    PY("LlamaForCausalLM.forward", SP "transformers/models/llama/modeling_llama.py", 480),
    PY("Module._call_impl", SP "torch/nn/modules/module.py", 1790),
    PY("Module._wrapped_call_impl", SP "torch/nn/modules/module.py", 1779),
    PY("train_step", "/work/job/train.py", 19),
    PY("main", "/work/job/train.py", 40),
    PY("<module>", "/work/job/train.py", 52),
};

/* cuBLAS's workspace, made inside the library (stripped frames first). */
static const struct gl_fc_frame cublas_workspace[] = {
    UNNAMED("/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cu13/lib/libcublas.so.13", 0x9a1c20),
    UNNAMED("/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cu13/lib/libcublas.so.13", 0x9a3f11),
    NATIVE("cublasCreate_v2", "/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cu13/lib/libcublas.so.13"),
    NATIVE("at::cuda::getCurrentCUDABlasHandle()", TL "libtorch_cuda.so"),
    NATIVE("void at::cuda::blas::gemm_internal_cublas<float, float>(char, char, long, long, long, "
           "at::OpMathType<float>::type, float const*, long, float const*, long, at::OpMathType<float>::type, float*, "
           "long)",
           TL "libtorch_cuda.so"),
    NATIVE("at::native::(anonymous namespace)::addmm_out_cuda_impl(at::Tensor&, at::Tensor const&, at::Tensor "
           "const&, at::Tensor const&, c10::Scalar const&, c10::Scalar const&, at::native::(anonymous "
           "namespace)::Activation)",
           TL "libtorch_cuda.so"),
    NATIVE("at::native::structured_mm_out_cuda::impl(at::Tensor const&, at::Tensor const&, at::Tensor const&)",
           TL "libtorch_cuda.so"),
    NATIVE("c10::impl::wrap_kernel_functor_unboxed_<c10::impl::detail::WrapFunctionIntoFunctor_<c10::"
           "CompileTimeFunctionPointer<at::Tensor (at::Tensor const&, at::Tensor const&), &at::(anonymous "
           "namespace)::(anonymous namespace)::wrapper_CUDA_mm(at::Tensor const&, at::Tensor const&)>, at::Tensor, "
           "c10::guts::typelist::typelist<at::Tensor const&, at::Tensor const&> >, at::Tensor (at::Tensor const&, "
           "at::Tensor const&)>::call(c10::OperatorKernel*, c10::DispatchKeySet, at::Tensor const&, at::Tensor "
           "const&)",
           TL "libtorch_cuda.so"),
    NATIVE("at::_ops::mm::redispatch(c10::DispatchKeySet, at::Tensor const&, at::Tensor const&)",
           TL "libtorch_cpu.so"),
    NATIVE("torch::autograd::VariableType::(anonymous namespace)::mm(c10::DispatchKeySet, at::Tensor const&, "
           "at::Tensor const&)",
           TL "libtorch_cpu.so"),
    PY("_in_projection_packed", SP "torch/nn/functional.py", 5836),
    PY("multi_head_attention_forward", SP "torch/nn/functional.py", 6478),
    PY("MultiheadAttention.forward", SP "torch/nn/modules/activation.py", 1492),
    PY("Module._call_impl", SP "torch/nn/modules/module.py", 1790),
    PY("Block.forward", "/work/main/scripts/gpu/torch_train.py", 42),
    PY("Module._call_impl", SP "torch/nn/modules/module.py", 1790),
    PY("main", "/work/main/scripts/gpu/torch_train.py", 85),
    PY("<module>", "/work/main/scripts/gpu/torch_train.py", 109),
};

/* nll_loss's backward on PyTorch's autograd thread: no Python at all. */
static const struct gl_fc_frame autograd_backward[] = {
    DEVICE_MALLOC,
    NATIVE_MALLOC,
    NATIVE_ALLOCATE,
    EMPTY_GENERIC,
    EMPTY_CUDA,
    CREATE_OUT,
    NATIVE("at::(anonymous namespace)::structured_nll_loss_backward_out_cuda_functional::set_output_raw_strided("
           "long, c10::ArrayRef<long>, c10::ArrayRef<long>, c10::TensorOptions, c10::ArrayRef<at::Dimname>)",
           TL "libtorch_cuda.so"),
    NATIVE("at::meta::structured_nll_loss_backward::meta(at::Tensor const&, at::Tensor const&, at::Tensor const&, "
           "at::OptionalTensorRef, long, long, at::Tensor const&)",
           TL "libtorch_cpu.so"),
    NATIVE("at::(anonymous namespace)::wrapper_CUDA_nll_loss_backward(at::Tensor const&, at::Tensor const&, "
           "at::Tensor const&, std::optional<at::Tensor> const&, long, long, at::Tensor const&)",
           TL "libtorch_cuda.so"),
    NATIVE("torch::autograd::generated::NllLossBackward0::apply(std::vector<at::Tensor, std::allocator<at::Tensor> "
           ">&&)",
           TL "libtorch_cpu.so"),
    NATIVE("torch::autograd::Node::operator()(std::vector<at::Tensor, std::allocator<at::Tensor> >&&)",
           TL "libtorch_cpu.so"),
    NATIVE("torch::autograd::Engine::evaluate_function(std::shared_ptr<torch::autograd::GraphTask>&, "
           "torch::autograd::Node*, torch::autograd::InputBuffer&, std::shared_ptr<torch::autograd::ReadyQueue> "
           "const&)",
           TL "libtorch_cpu.so"),
    NATIVE("torch::autograd::Engine::thread_main(std::shared_ptr<torch::autograd::GraphTask> const&)",
           TL "libtorch_cpu.so"),
    NATIVE("torch::autograd::python::PythonEngine::thread_init(int, std::shared_ptr<torch::autograd::ReadyQueue> "
           "const&, bool)",
           TL "libtorch_python.so"),
    UNNAMED("/lib/x86_64-linux-gnu/libstdc++.so.6", 0xdc253),
    NATIVE("start_thread", "/lib/x86_64-linux-gnu/libc.so.6"),
    NATIVE("__clone3", "/lib/x86_64-linux-gnu/libc.so.6"),
};

/* A block's stack through the allocator shim's trace tracker. */
static const struct gl_fc_frame shim_tracker[] = {
    NATIVE("(anonymous namespace)::on_trace(c10::cuda::CUDACachingAllocator::TraceEntry const&)",
           "/root/.cache/gpuledger/torch-shim/torch-2.11.0-abi1-gl0.1.0-3f9a/gpuledger_torch_shim.so"),
    NATIVE("std::_Function_handler<void (c10::cuda::CUDACachingAllocator::TraceEntry const&), void "
           "(*)(c10::cuda::CUDACachingAllocator::TraceEntry const&)>::_M_invoke(std::_Any_data const&, "
           "c10::cuda::CUDACachingAllocator::TraceEntry const&)",
           TL "libc10_cuda.so"),
    NATIVE("c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::record_trace(c10::cuda::"
           "CUDACachingAllocator::TraceEntry::Action, unsigned long, unsigned long, CUstream_st*, signed char, "
           "std::pair<unsigned long long, unsigned long long>, std::shared_ptr<c10::GatheredContext>)",
           TL "libc10_cuda.so"),
    DEVICE_MALLOC,
    NATIVE_MALLOC,
    NATIVE_ALLOCATE,
    EMPTY_GENERIC,
    EMPTY_CUDA,
    PY("Linear.forward", SP "torch/nn/modules/linear.py", 134),
    PY("Module._call_impl", SP "torch/nn/modules/module.py", 1790),
    PY("Model.forward", "/home/me/lora/train.py", 12),
    PY("Module._call_impl", SP "torch/nn/modules/module.py", 1790),
    PY("<module>", "/home/me/lora/train.py", 30),
};

/* tests/golden/db/alloc1000.db: a C program. */
static const struct gl_fc_frame c_program[] = {
    NATIVE("allocate_buffers", "build/tests/alloc1000"),
    NATIVE("main", "build/tests/alloc1000"),
    UNNAMED("/lib/x86_64-linux-gnu/libc.so.6", 0x271ca),
    NATIVE("__libc_start_main", "/lib/x86_64-linux-gnu/libc.so.6"),
    NATIVE("_start", "build/tests/alloc1000"),
};

/* tests/golden/db/python.db: an embedded Python's main thread, and a
 * Python thread (the standard library's threading frames). */
static const struct gl_fc_frame embedded[] = {
    NATIVE("py_alloc", "build/tests/pyembed"),
    PY("leaf", "tests/golden/py_golden.py", 10),
    PY("Model.forward", "tests/golden/py_golden.py", 15),
    PY("train", "tests/golden/py_golden.py", 24),
    PY("<module>", "tests/golden/py_golden.py", 29),
};
static const struct gl_fc_frame python_thread[] = {
    NATIVE("py_loop", "build/tests/pyembed"),
    PY("<lambda>", "tests/golden/py_golden.py", 30),
    PY("Thread.run", "/usr/lib/python3.11/threading.py", 975),
    PY("Thread._bootstrap_inner", "/usr/lib/python3.11/threading.py", 1038),
    PY("Thread._bootstrap", "/usr/lib/python3.11/threading.py", 995),
};

/* A region of a program's own pool, through gpuledger.Pool (ctypes). */
static const struct gl_fc_frame pool_call[] = {
    NATIVE("ffi_call", "/lib/x86_64-linux-gnu/libffi.so.8"),
    UNNAMED("/usr/lib/python3.12/lib-dynload/_ctypes.cpython-312-x86_64-linux-gnu.so", 0x12f04),
    PY("Pool.alloc", "/usr/local/lib/python3.12/dist-packages/gpuledger/pool.py", 80),
    PY("admit", "/work/kv/engine.py", 44),
    PY("serve", "/work/kv/engine.py", 90),
    PY("_run_module_as_main", "<frozen runpy>", 198),
};

/* Allocator internals alone (a stack cut at its depth). */
static const struct gl_fc_frame allocator_only[] = {DEVICE_MALLOC, NATIVE_MALLOC};

static const char *classes(const struct gl_fc_frame *f, int n)
{
    static char buf[128];
    for (int i = 0; i < n; i++)
        buf[i] = "ULA"[gl_fc_classify(&f[i])];
    buf[n] = 0;
    return buf;
}

static const char *chain(const struct gl_fc_frame *f, int n)
{
    static char buf[2048];
    return gl_fc_chain_text(f, n, buf, sizeof buf);
}

static void assert_chain(const struct gl_fc_frame *f, int n, int op, int user, int outer, int allocator)
{
    struct gl_fc_chain c;
    gl_fc_chain(f, n, &c);
    assert_int_equal(c.op, op);
    assert_int_equal(c.user, user);
    assert_int_equal(c.outer, outer);
    assert_int_equal(c.allocator, allocator);
}

static void test_classes(void **state)
{
    (void)state;
    assert_string_equal(classes(lora_loss, N(lora_loss)), "AAAAAAAALLLLLLUUU");
    assert_string_equal(classes(cublas_workspace, N(cublas_workspace)), "LLLLLLLLLLLLLLULUU");
    assert_string_equal(classes(autograd_backward, N(autograd_backward)), "AAAAAAAALLLLLLLLL");
    assert_string_equal(classes(shim_tracker, N(shim_tracker)), "AAAAAAAALLULU");
    assert_string_equal(classes(c_program, N(c_program)), "UULLU");
    assert_string_equal(classes(embedded, N(embedded)), "UUUUU");
    assert_string_equal(classes(python_thread, N(python_thread)), "UULLL");
    assert_string_equal(classes(pool_call, N(pool_call)), "AAAUUL");
    /* the interpreter's own frames, an unknown module, no module */
    const struct gl_fc_frame odd[] = {NATIVE("_PyEval_EvalFrameDefault", "/usr/bin/python3.12"),
                                      UNNAMED(NULL, 0x1000), NATIVE("jit_code", NULL),
                                      PY("<module>", "<stdin>", 1), PY("f", NULL, 3)};
    assert_string_equal(classes(odd, N(odd)), "LLLUL");
    assert_string_equal(gl_fc_class_name(GL_FC_USER), "user");
    assert_string_equal(gl_fc_class_name(GL_FC_LIBRARY), "library");
    assert_string_equal(gl_fc_class_name(GL_FC_ALLOCATOR), "allocator");
    assert_string_equal(gl_fc_class_name(7), "?");
}

static const char *shortened(const char *symbol)
{
    static char buf[512];
    return gl_fc_short_name(symbol, buf, sizeof buf);
}

static void test_short_names(void **state)
{
    (void)state;
    static const char *const cases[][2] = {
        {"at::native::(anonymous namespace)::addmm_out_cuda_impl(at::Tensor&, at::Tensor const&, at::Tensor const&, "
         "at::Tensor const&, c10::Scalar const&, c10::Scalar const&, at::native::(anonymous namespace)::Activation)",
         "at::native::(anonymous namespace)::addmm_out_cuda_impl"},
        {"void at::cuda::blas::gemm_internal_cublas<float, float>(char, char, long, long, long, "
         "at::OpMathType<float>::type, float const*, long, float const*, long, at::OpMathType<float>::type, float*, "
         "long)",
         "at::cuda::blas::gemm_internal_cublas"},
        {"std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, c10::SymInt, c10::SymInt, at::Tensor, "
         "at::Tensor, at::Tensor> at::native::_scaled_dot_product_flash_attention_cuda(at::Tensor const&, at::Tensor "
         "const&, at::Tensor const&, double, bool, bool, std::optional<double>)",
         "at::native::_scaled_dot_product_flash_attention_cuda"},
        {"void at::native::(anonymous namespace)::softmax_warp_forward<float, float, float, 10, false, false>(float*, "
         "float const*, int, int, int, bool const*, int, bool)",
         "at::native::(anonymous namespace)::softmax_warp_forward"},
        {"at::(anonymous namespace)::(anonymous namespace)::wrapper_CUDA_memory_format_empty(c10::ArrayRef<c10::"
         "SymInt>, std::optional<c10::ScalarType>, std::optional<c10::Layout>, std::optional<c10::Device>, "
         "std::optional<bool>, std::optional<c10::MemoryFormat>)",
         "at::(anonymous namespace)::(anonymous namespace)::wrapper_CUDA_memory_format_empty"},
        {"std::_Function_handler<void (c10::cuda::CUDACachingAllocator::TraceEntry const&), void "
         "(*)(c10::cuda::CUDACachingAllocator::TraceEntry const&)>::_M_invoke(std::_Any_data const&, "
         "c10::cuda::CUDACachingAllocator::TraceEntry const&)",
         "std::_Function_handler::_M_invoke"},
        {"std::vector<at::Tensor, std::allocator<at::Tensor> >::_M_realloc_insert<at::Tensor "
         "const&>(__gnu_cxx::__normal_iterator<at::Tensor*, std::vector<at::Tensor, std::allocator<at::Tensor> > "
         ">, at::Tensor const&)",
         "std::vector::_M_realloc_insert"},
        {"std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >::_M_construct<char "
         "const*>(char const*, char const*, std::forward_iterator_tag) [clone .isra.0]",
         "std::__cxx11::basic_string::_M_construct"},
        /* operators, their '<' not template arguments */
        {"c10::operator<<(std::ostream&, c10::Device const&)", "c10::operator<<"},
        {"bool std::operator< <char, std::char_traits<char>, std::allocator<char> >(std::__cxx11::basic_string<char, "
         "std::char_traits<char>, std::allocator<char> > const&, char const*)",
         "std::operator<"},
        {"std::less<void>::operator()<int&, int&>(int&, int&) const", "std::less::operator()"},
        {"at::Tensor::operator[](long) const", "at::Tensor::operator[]"},
        {"at::Tensor::operator=(at::Tensor&&) &", "at::Tensor::operator="},
        {"c10::intrusive_ptr<c10::TensorImpl, c10::UndefinedTensorImpl>::operator->() const",
         "c10::intrusive_ptr::operator->"},
        {"c10::intrusive_ptr<c10::TensorImpl, c10::UndefinedTensorImpl>::operator bool() const",
         "c10::intrusive_ptr::operator bool"},
        {"c10::ArrayRef<long>::operator std::vector<long, std::allocator<long> >() const",
         "c10::ArrayRef::operator std::vector"},
        {"operator new(unsigned long)", "operator new"},
        {"operator delete[](void*)", "operator delete[]"},
        /* lambdas and local entities */
        {"at::native::(anonymous namespace)::launch_kernel(at::TensorIteratorBase&)::{lambda(int)#2}::operator()(int) "
         "const",
         "at::native::(anonymous namespace)::launch_kernel::{lambda#2}::operator()"},
        {"c10::function_ref<void (char**, long const*, long, long)>::callback_fn<at::native::(anonymous "
         "namespace)::add_kernel(at::TensorIteratorBase&, c10::Scalar const&)::{lambda()#1}::operator()() "
         "const::{lambda(char**, long const*, long, long)#1}>(long, char**, long const*, long, long)",
         "c10::function_ref::callback_fn"},
        {"foo(int)::{unnamed type#1}::bar()", "foo::{unnamed type#1}::bar"},
        /* ABI tags, thunks, C names and what is not C++ at all */
        {"c10::Device::str[abi:cxx11]() const", "c10::Device::str"},
        {"non-virtual thunk to at::native::Foo::bar(int)", "at::native::Foo::bar"},
        {"cublasCreate_v2", "cublasCreate_v2"},
        {"main", "main"},
        {"__clone3", "__clone3"},
        {"scratch.cold", "scratch.cold"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        assert_string_equal(shortened(cases[i][0]), cases[i][1]);
    assert_string_equal(shortened(NULL), "");
    /* cut to the buffer, always terminated */
    char small[12];
    assert_string_equal(gl_fc_short_name("at::native::(anonymous namespace)::addmm_out_cuda_impl(int)", small,
                                         sizeof small),
                        "at::native:");
    char none[1] = {'x'};
    gl_fc_short_name("at::f(int)", none, 0);
    assert_int_equal(none[0], 'x');
}

static void test_frame_text(void **state)
{
    (void)state;
    char buf[256];
    assert_string_equal(gl_fc_frame_text(&lora_loss[8], buf, sizeof buf), "cross_entropy (torch/nn/functional.py:3504)");
    assert_string_equal(gl_fc_frame_text(&lora_loss[14], buf, sizeof buf), "train_step (/work/job/train.py:19)");
    assert_string_equal(gl_fc_frame_text(&python_thread[2], buf, sizeof buf), "Thread.run (threading.py:975)");
    assert_string_equal(gl_fc_frame_text(&pool_call[5], buf, sizeof buf), "_run_module_as_main (<frozen runpy>:198)");
    assert_string_equal(gl_fc_frame_text(&cublas_workspace[4], buf, sizeof buf), "at::cuda::blas::gemm_internal_cublas");
    assert_string_equal(gl_fc_frame_text(&cublas_workspace[0], buf, sizeof buf), "libcublas.so.13+0x9a1c20");
    const struct gl_fc_frame with_line = {"gl::f(int)", "libx.so", "x.c", 7, 0, 0}, nothing = UNNAMED(NULL, 0x10);
    assert_string_equal(gl_fc_frame_text(&with_line, buf, sizeof buf), "gl::f (x.c:7)");
    assert_string_equal(gl_fc_frame_text(&nothing, buf, sizeof buf), "?+0x10");
}

static void test_chains(void **state)
{
    (void)state;
    assert_chain(lora_loss, N(lora_loss), 8, 14, 16, 8);
    assert_string_equal(chain(lora_loss, N(lora_loss)), "cross_entropy (torch/nn/functional.py:3504) <- ... <- "
                                                        "train_step (/work/job/train.py:19) <- ... <- <module> "
                                                        "(/work/job/train.py:52)");
    /* the library's stripped frames before its named one */
    assert_chain(cublas_workspace, N(cublas_workspace), 2, 14, 17, 0);
    assert_string_equal(chain(cublas_workspace, N(cublas_workspace)),
                        "cublasCreate_v2 <- ... <- Block.forward (/work/main/scripts/gpu/torch_train.py:42) <- ... "
                        "<- <module> (/work/main/scripts/gpu/torch_train.py:109)");
    /* no user frame */
    /* the outermost frame past the thread's start (libstdc++'s unnamed routine, start_thread, clone) */
    assert_chain(autograd_backward, N(autograd_backward), 8, -1, 13, 8);
    assert_string_equal(chain(autograd_backward, N(autograd_backward)),
                        "at::(anonymous namespace)::wrapper_CUDA_nll_loss_backward <- ... <- "
                        "torch::autograd::python::PythonEngine::thread_init");
    assert_chain(shim_tracker, N(shim_tracker), 8, 10, 12, 8);
    assert_string_equal(chain(shim_tracker, N(shim_tracker)),
                        "Linear.forward (torch/nn/modules/linear.py:134) <- ... <- Model.forward "
                        "(/home/me/lora/train.py:12) <- ... <- <module> (/home/me/lora/train.py:30)");
    /* the op is the user's frame: shown once; the outermost is main, past the process's start */
    assert_chain(c_program, N(c_program), 0, 0, 1, 0);
    assert_string_equal(chain(c_program, N(c_program)), "allocate_buffers <- main");
    assert_string_equal(chain(embedded, N(embedded)), "py_alloc <- ... <- <module> (tests/golden/py_golden.py:29)");
    assert_string_equal(chain(python_thread, N(python_thread)),
                        "py_loop <- ... <- Thread._bootstrap (threading.py:995)");
    /* neighbours: no "..." between them */
    assert_chain(pool_call, N(pool_call), 3, 3, 5, 3);
    assert_string_equal(chain(pool_call, N(pool_call)),
                        "admit (/work/kv/engine.py:44) <- ... <- _run_module_as_main (<frozen runpy>:198)");
    assert_string_equal(chain(pool_call, 5), "admit (/work/kv/engine.py:44) <- serve (/work/kv/engine.py:90)");
    assert_string_equal(chain(pool_call, 4), "admit (/work/kv/engine.py:44)");
    /* allocator internals alone; one frame; none */
    assert_chain(allocator_only, N(allocator_only), -1, -1, 1, 2);
    assert_string_equal(chain(allocator_only, N(allocator_only)),
                        "c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc <- "
                        "c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator::malloc");
    assert_string_equal(chain(c_program, 1), "allocate_buffers");
    assert_chain(c_program, 0, -1, -1, -1, 0);
    assert_string_equal(chain(c_program, 0), "(no stack)");
    /* a short buffer: cut, terminated */
    char small[16];
    assert_string_equal(gl_fc_chain_text(lora_loss, N(lora_loss), small, sizeof small), "cross_entropy (");
}

/* A recorded stack of the report's model made of a test's frames. */
static const char *place(const struct gl_fc_frame *v, int n)
{
    static struct gl_frame f[64];
    static uint32_t fi[64];
    static char buf[512];
    for (int i = 0; i < n; i++) {
        f[i] = (struct gl_frame){(char *)v[i].symbol, (char *)v[i].module, (char *)v[i].file, v[i].line, v[i].python,
                                 v[i].offset};
        fi[i] = (uint32_t)i;
    }
    struct gl_stack st = {.id = 1, .frames = f, .fi = fi, .n = n};
    return gl_stack_place(&st, buf, sizeof buf);
}

/* Where a request was made, as the diagnosis's OOM sentence says it: at the
 * user's frame, else in the op (a request made on autograd's thread read
 * "the failing request: 64.00 MiB at at::(anonymous namespace)::..."). */
static void test_place(void **state)
{
    (void)state;
    assert_string_equal(place(lora_loss, N(lora_loss)), "at train_step (/work/job/train.py:19)");
    assert_string_equal(place(c_program, N(c_program)), "at allocate_buffers");
    assert_string_equal(place(autograd_backward, N(autograd_backward)),
                        "in at::(anonymous namespace)::wrapper_CUDA_nll_loss_backward");
    assert_string_equal(place(c_program, 0), "with no stack recorded");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_classes),
        cmocka_unit_test(test_short_names),
        cmocka_unit_test(test_frame_text),
        cmocka_unit_test(test_chains),
        cmocka_unit_test(test_place),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
