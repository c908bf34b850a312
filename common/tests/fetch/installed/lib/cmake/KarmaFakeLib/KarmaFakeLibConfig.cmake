# Stands in for an installed package.
set(KarmaFakeLib_VERSION 2.0)
add_library(karma_fake_lib INTERFACE IMPORTED)
