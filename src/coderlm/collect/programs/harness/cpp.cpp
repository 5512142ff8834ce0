// coderlm LeetCode harness for C++ (docs/programs.md), filled in by coderlm.collect.programs.harness.
// Everything but the solution is in cpp_harness.h, precompiled once, and cpp_harness.o (support "cpp_pch").
#include "cpp_harness.h"

{{SOLUTION}}

int main(int argc, char **argv) {
    auto run = [](const coderlm::J &input, bool counting) {
        return coderlm::run<Solution>(&Solution::{{METHOD}}, input, counting);
    };
    return coderlm::drive(run, argc, argv);
}
