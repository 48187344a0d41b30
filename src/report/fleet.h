// `kvplan fleet` output: the chosen plan with its launch line and a
// deployment config `kvplan check` passes, the next alternatives, what rules
// each rejected family out, and the throughput-latency frontier (a table,
// a terminal chart or SVG); JSON and CSV for machines.
#pragma once

#include <string>

#include "plan/fleet.h"
#include "report/chart.h"
#include "report/json.h"

namespace kvplan {

/// What the report needs beside the result: the model's name (as the user
/// gave it, for the launch line), the load and targets.
struct FleetQuery {
  std::string model;  // as the user named it
  std::string serve;  // what the engine loads: the model's hf_repo, else `model`
  Engine engine = Engine::kVllm;
  FleetLoad load;
  FleetTargets targets;
};

std::string FleetText(const FleetQuery& q, const FleetResult& r, size_t width);
Json FleetJson(const FleetQuery& q, const FleetResult& r);
std::string FleetCsv(const FleetResult& r);
/// --explain: the arithmetic behind the chosen plan, step by step.
std::string FleetExplain(const FleetQuery& q, const FleetResult& r);
/// The frontier as a chart: tokens/s per user (x) against tokens/s per GPU.
Chart FleetChart(const FleetResult& r);

/// The chosen plan as its engine's launch line, and as a deployment config.
std::string FleetLaunchLine(const FleetQuery& q, const FleetPlan& p);
std::string FleetDeployConfig(const FleetQuery& q, const FleetPlan& p);

}  // namespace kvplan
