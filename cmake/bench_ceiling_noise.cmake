# The noise floor of the bench's '% read ceiling' (bench/ceiling_noise.cpp).
# Not built by default:
#   cmake --build --preset release --target kvplan_bench_ceiling_noise
add_executable(kvplan_bench_ceiling_noise EXCLUDE_FROM_ALL bench/ceiling_noise.cpp)
target_link_libraries(kvplan_bench_ceiling_noise PRIVATE kvplan_measure kvplan_warnings)
