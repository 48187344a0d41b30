#include "report/chart.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "report/svg.h"
#include "xml_check.h"

using namespace kvplan;
using kvplan::test::XmlCheck;

namespace {

Chart SampleChart() {
  Chart c;
  c.title = "Llama <3.1> & friends: max batch";
  c.x = {"context length (tokens)", true, AxisLabels::kTokens};
  c.y = {"max concurrent requests", true, AxisLabels::kPlain};
  ChartSeries a{"fp16 \"cache\"", {}, false};
  ChartSeries b{"fp8 cache", {}, true};
  for (uint64_t ctx = 1024; ctx <= 131072; ctx *= 2) {
    a.points.push_back({double(ctx), double(4'000'000 / ctx)});
    b.points.push_back({double(ctx), double(8'000'000 / ctx)});
  }
  a.points.push_back({262144, 0});  // a log axis cannot show 0: skipped, not a crash
  c.series = {a, b};
  return c;
}

}  // namespace

TEST_CASE("the XML checker itself rejects malformed documents") {
  XmlCheck x;
  CHECK(x.Check("<a><b/></a>") == "");
  CHECK(x.Check("<a><b></a>") != "");
  CHECK(x.Check("<a x=1/>") != "");
  CHECK(x.Check("<a x=\"1\" x=\"2\"/>") != "");
  CHECK(x.Check("<a>1 & 2</a>") != "");
  CHECK(x.Check("<a>1 < 2</a>") != "");
  CHECK(x.Check("<a/><b/>") != "");
  CHECK(x.Check("<a>") != "");
  CHECK(x.Check("<a>&amp;&#x41;</a>") == "");
}

TEST_CASE("SVG output is well-formed XML with the title, axis titles and series names") {
  Chart c = SampleChart();
  std::string svg = RenderSvg(c);
  XmlCheck x;
  REQUIRE(x.Check(svg) == "");
  CHECK(svg.rfind(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\"",
            0) == 0);
  CHECK(x.text.find("Llama <3.1> & friends: max batch") != std::string::npos);
  CHECK(x.text.find("context length (tokens)") != std::string::npos);
  CHECK(x.text.find("max concurrent requests") != std::string::npos);
  CHECK(x.text.find("fp16 \"cache\"") != std::string::npos);
  CHECK(x.text.find("fp8 cache") != std::string::npos);
  // Log2 tick labels for tokens.
  for (const char* tick : {">1K<", ">2K<", ">64K<", ">128K<"})
    CHECK(svg.find(tick) != std::string::npos);
  // One path per series plus the axes; two legend rows.
  int series = 0;
  for (size_t p = svg.find("class=\"series\""); p != std::string::npos;
       p = svg.find("class=\"series\"", p + 1)) {
    ++series;
  }
  CHECK(series == 2);
  CHECK(svg.find("NaN") == std::string::npos);
  CHECK(svg.find("nan") == std::string::npos);
  CHECK(svg.find("inf") == std::string::npos);
  // A step series draws horizontal then vertical segments.
  CHECK(svg.find(" H") != std::string::npos);
  // An empty chart is still a valid document.
  Chart empty;
  empty.title = "nothing";
  XmlCheck e;
  CHECK(e.Check(RenderSvg(empty)) == "");
}

TEST_CASE("axes: log2 ticks on powers of two, linear ticks on 1/2/5 steps") {
  AxisScale l = FitAxis({"", true, AxisLabels::kTokens}, {1000, 100000});
  CHECK(l.lo == 512);
  CHECK(l.hi == 131072);
  CHECK(l.ticks.front() == 512);
  CHECK(l.ticks.back() == 131072);
  CHECK(l.ticks.size() == 9);
  CHECK(l.Position(512) == doctest::Approx(0));
  CHECK(l.Position(131072) == doctest::Approx(1));
  CHECK(l.Position(8192) == doctest::Approx(0.5));
  AxisScale wide = FitAxis({"", true, AxisLabels::kPlain}, {1, 1 << 30});
  CHECK(wide.ticks.size() <= 11);
  // 1 .. 32768 needs every other power: 1, 4, ..., 65536, both ends on ticks.
  AxisScale odd = FitAxis({"", true, AxisLabels::kPlain}, {1, 32768});
  CHECK(odd.ticks.front() == 1);
  CHECK(odd.lo == 1);
  CHECK(odd.ticks.back() == odd.hi);
  CHECK(odd.hi == 65536);
  CHECK(odd.ticks.size() == 9);
  AxisScale lin = FitAxis({"", false, AxisLabels::kPlain}, {3, 97});
  CHECK(lin.lo == 0);
  CHECK(lin.hi == 100);
  CHECK(lin.ticks == std::vector<double>{0, 20, 40, 60, 80, 100});
  CHECK(TickLabel(131072, AxisLabels::kTokens) == "128K");
  CHECK(TickLabel(1048576, AxisLabels::kTokens) == "1M");
  CHECK(TickLabel(512, AxisLabels::kTokens) == "512");
  CHECK(TickLabel(1000, AxisLabels::kTokens) == "1,000");
  CHECK(TickLabel(0.5, AxisLabels::kPlain) == "0.5");
  CHECK(TickLabel(4096, AxisLabels::kPlain) == "4,096");
}

TEST_CASE("terminal chart: braille plot with labels, ticks and a legend") {
  std::string t = RenderTerminalChart(SampleChart(), 40, 10);
  CHECK(t.rfind("Llama <3.1> & friends: max batch\n", 0) == 0);
  CHECK(t.find("max concurrent requests") != std::string::npos);
  CHECK(t.find("context length (tokens)") != std::string::npos);
  CHECK(t.find("● fp16 \"cache\"") != std::string::npos);
  CHECK(t.find("■ fp8 cache") != std::string::npos);
  CHECK(t.find("1K") != std::string::npos);
  CHECK(t.find("128K") != std::string::npos);
  CHECK(t.find("└") != std::string::npos);
  // Some braille (U+2800..U+28FF starts with E2 A0..A3 in UTF-8) was drawn.
  bool braille = false;
  for (size_t i = 0; i + 1 < t.size(); ++i) {
    braille = braille || (static_cast<unsigned char>(t[i]) == 0xE2 &&
                          (static_cast<unsigned char>(t[i + 1]) & 0xFC) == 0xA0);
  }
  CHECK(braille);
  // Title, y title, 10 plot rows, rule, labels, x title, legend.
  int lines = 0;
  for (char ch : t) lines += ch == '\n';
  CHECK(lines == 16);
}
