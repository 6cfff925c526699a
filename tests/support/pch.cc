// The source of rigel_test_pch, the object library whose precompiled header (GoogleTest, Eigen)
// every test executable reuses (tests/CMakeLists.txt, RIGEL_PCH).
