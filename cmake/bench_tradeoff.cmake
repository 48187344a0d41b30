# The tradeoff sweep benchmark (bench/tradeoff_bench.cpp). Not built by
# default: cmake --build --preset release --target kvplan_bench_tradeoff
add_executable(kvplan_bench_tradeoff EXCLUDE_FROM_ALL bench/tradeoff_bench.cpp)
target_link_libraries(kvplan_bench_tradeoff PRIVATE kvplan_plan kvplan_warnings)
