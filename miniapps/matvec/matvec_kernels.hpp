// Dense y = B x over a karma array B of either layout: the kernels, the
// seeded data, the check of every entry of y against a reference computed
// on the device from the seeded data's closed form, and a host reference in
// long double (the unit tests' oracle for that check).
//
// B is the operator the kernels see. For y = A x it is A; for y = A^T x it is
// the same storage read with the other layout and swapped extents (A
// LayoutLeft M x N is exactly A^T LayoutRight N x M), so transposition needs
// no kernel of its own: the layout of B decides everything.
#pragma once

// The kernels by family: matvec_basics.hpp (variants, seeded data),
// matvec_rows.hpp (a row to a thread or a team), matvec_columns.hpp (mdrange
// and the packed column kernels), matvec_launch.hpp (policies, launchers,
// multiply), matvec_verify.hpp (the check of y and the references); the
// sparse family, on these, is matvec_csr.hpp.
#include "matvec_basics.hpp"
#include "matvec_columns.hpp"
#include "matvec_launch.hpp"
#include "matvec_rows.hpp"
#include "matvec_verify.hpp"
