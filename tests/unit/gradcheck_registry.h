// The gradient checks of gradcheck_test.cc by name, for tests that refer to them
// (kernel_coverage_test.cc): the names come from the very tables the checks run.
#ifndef LOCKSTEP_TESTS_UNIT_GRADCHECK_REGISTRY_H_
#define LOCKSTEP_TESTS_UNIT_GRADCHECK_REGISTRY_H_

#include <string>
#include <vector>

namespace lockstep {
namespace testing {

// Every op whose analytic gradient gradcheck_test.cc checks against finite differences ("conv2d",
// "layer_norm", ...), each TEST_CASE's table in order.
std::vector<std::string> GradcheckOpNames();

}  // namespace testing
}  // namespace lockstep

#endif  // LOCKSTEP_TESTS_UNIT_GRADCHECK_REGISTRY_H_
