# The fleet search benchmark (bench/fleet_bench.cpp). Not built by default:
# cmake --build --preset release --target kvplan_bench_fleet
add_executable(kvplan_bench_fleet EXCLUDE_FROM_ALL bench/fleet_bench.cpp)
target_link_libraries(kvplan_bench_fleet PRIVATE kvplan_plan kvplan_warnings)
