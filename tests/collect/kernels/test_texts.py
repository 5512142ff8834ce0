"""What a model reads of a generated kernel: simplified casts and a loop summary with the iteration count."""

from coderlm.collect.kernels.texts import as_kernel_text, iterations, kernel_text, loop_paths, simplify, summary

NEST = """extern "C" void kernel(const float* in_ptr0, float* out_ptr0)
{
    {
        #pragma GCC ivdep
        for(int64_t x0=static_cast<int64_t>(0L); x0<static_cast<int64_t>(18L); x0+=static_cast<int64_t>(1L))
        {
            for(int64_t x1=static_cast<int64_t>(0L); x1<static_cast<int64_t>(64L); x1+=static_cast<int64_t>(16L))
            {
                auto tmp0 = in_ptr0[static_cast<int64_t>(x1 + 64L*x0)];
            }
            for(int64_t x1=static_cast<int64_t>(0L); x1<static_cast<int64_t>(10L); x1+=static_cast<int64_t>(1L))
            {
                for (long x1_inner = 0; x1_inner < static_cast<int64_t>(16); x1_inner++)
                {
                    out_ptr0[x1_inner] = 0;
                }
            }
        }
    }
    {
        for(int64_t x0=static_cast<int64_t>(0L); x0<ks0; x0+=static_cast<int64_t>(1L))
        {
            out_ptr0[x0] = 1;
        }
    }
}
"""


def test_simplify_writes_casts_and_long_suffixes_as_plain_numbers():
    assert simplify("x0<static_cast<int64_t>(4096L); a[static_cast<int64_t>(x1 + 2048L*x0)]") == (
        "x0<4096; a[static_cast<int64_t>(x1 + 2048*x0)]"
    )


def test_loop_paths_follow_the_braces_and_count_vector_steps():
    # 18 rows x (64 / 16 vector steps), then 18 x 10 x 16 scalar, then a symbolic bound
    assert loop_paths(NEST) == [[18, 4], [18, 10, 16], [None]]
    assert iterations(NEST) == 18 * 4 + 18 * 10 * 16 + 1


def test_summary_states_the_total_and_each_path():
    assert summary(NEST) == "// loops: 2953 iterations (18x4=72, 18x10x16=2880, ?=1)"
    assert summary('extern "C" void kernel(float* out_ptr0)\n{\n    out_ptr0[0] = 1;\n}\n') == ""


def test_triton_kernels_count_their_numels():
    triton = "def triton_poi(in_ptr0, out_ptr0, xnumel, XBLOCK):\n    xnumel = 4096\n    r0_numel = 32\n"
    assert iterations(triton) == 4096 * 32
    assert summary(triton) == "// loops: 131072 iterations (xnumel=4096, r0_numel=32)"


def test_kernel_text_puts_name_and_summary_first():
    lines = kernel_text("cpp_fused_add_0", NEST).splitlines()
    assert lines[:2] == ["// cpp_fused_add_0", "// loops: 2953 iterations (18x4=72, 18x10x16=2880, ?=1)"]
    assert "for(int64_t x0=0; x0<18; x0+=1)" in lines[6]


def test_as_kernel_text_annotates_raw_kernels_and_leaves_collected_ones():
    collected = kernel_text("cpp_fused_add_0", NEST)
    assert as_kernel_text(collected) == collected
    assert as_kernel_text("// cpp_fused_add_0\n" + NEST) == collected
    assert as_kernel_text(NEST).splitlines()[0].startswith("// loops: 2953 iterations")
