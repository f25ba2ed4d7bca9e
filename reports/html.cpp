// HTML rendering of a capability matrix, serialized by reports/markup.
#include "reports/html.hpp"

#include <fmt/format.h>

#include "reports/evidence_text.hpp"
#include "reports/grid.hpp"
#include "reports/markup.hpp"

namespace sonata::reports {
namespace {

constexpr std::string_view k_not_equal = "≠";

constexpr std::string_view k_css = R"(
body { font-family: sans-serif; margin: 1.5em; color: #1d1d1f; background: #ffffff; }
h1 { font-size: 1.5em; margin-bottom: 0.2em; }
.meta { color: #555555; margin-top: 0; }
.notice { background: #fff0f0; border-left: 4px solid #c62828; padding: 0.4em 0.8em; }
table { border-collapse: collapse; margin-bottom: 1.5em; }
th, td { border: 1px solid #bbbbbb; padding: 0.3em 0.5em; text-align: left; vertical-align: top; }
thead th { background: #f2f2f2; font-size: 0.85em; }
td.cell { min-width: 7em; }
td.missing { color: #999999; text-align: center; }
td.disagree { outline: 3px dashed #6a1b9a; outline-offset: -3px; }
summary { cursor: pointer; font-weight: bold; }
pre { white-space: pre-wrap; max-width: 40em; font-size: 0.8em; margin: 0.4em 0 0 0; }
.legend { list-style: none; padding: 0; }
.legend li { margin: 0.2em 0; }
.swatch { display: inline-block; min-width: 9em; padding: 0.1em 0.4em; margin-right: 0.5em;
          border: 1px solid #bbbbbb; font-weight: bold; }
)";

std::string css() {
    std::string out(k_css);
    for (const auto& style : verdict_styles()) {
        out += fmt::format(".v-{} {{ background: {}; }}\n", to_string(style.verdict), style.colour);
    }
    return out;
}

void add_head(Element html, const Matrix& m) {
    Element head = html.add("head");
    head.add("meta").set("charset", "utf-8");
    head.add("meta").set("name", "viewport").set("content", "width=device-width, initial-scale=1");
    head.add("title", "sonata capability matrix: " + m.machine);
    head.add("style", css());
}

void add_intro(Element body, const Matrix& m, const Grid& grid) {
    body.add("h1", "sonata capability matrix");
    std::string facts = std::string(grid.merged ? "Machines: " : "Machine: ") + m.machine;
    if (!m.platform.empty()) facts += " · platform: " + m.platform;
    if (!m.sonata_version.empty()) facts += " · sonata " + m.sonata_version;
    if (!m.created_at.empty()) facts += " · measured " + m.created_at;
    body.add("p", facts).set("class", "meta");
    if (!grid.disagreeing.empty()) {
        body.add("p", fmt::format("{} Machines disagree on {} cell(s): they are outlined.",
                                  k_not_equal, grid.disagreeing.size()))
            .set("class", "notice");
    }
}

void add_legend(Element body, const Grid& grid) {
    Element section = body.add("section");
    section.set("id", "legend");
    section.add("h2", "Legend");
    Element list = section.add("ul");
    list.set("class", "legend");
    for (const auto& style : verdict_styles()) {
        Element item = list.add("li");
        item.add("span", to_string(style.verdict))
            .set("class", fmt::format("swatch v-{}", to_string(style.verdict)));
        item.text(style.meaning);
    }
    list.add("li").text("· not measured");
    if (grid.merged)
        list.add("li").text(std::string(k_not_equal) +
                            " outlined: the machines disagree on this cell");
}

void add_cell(Element row, const Cell* cell, const Grid& grid) {
    if (cell == nullptr) {
        row.add("td", "·").set("class", "missing");
        return;
    }
    const bool disagrees = grid.disagrees(*cell);
    Element td = row.add("td");
    td.set("class",
           fmt::format("cell v-{}{}", to_string(cell->verdict), disagrees ? " disagree" : ""));
    Element details = td.add("details");
    std::string summary(to_string(cell->verdict));
    if (disagrees) summary += " " + std::string(k_not_equal);
    details.add("summary", summary);
    details.add("pre", evidence_text(*cell));
}

void add_table(Element body, const ModeTable& t, const Grid& grid) {
    Element section = body.add("section");
    section.set("id", "mode-" + t.mode);
    section.add("h2", "Mode: " + t.mode);
    Element table = section.add("table");
    Element head = table.add("thead").add("tr");
    head.add("th", "harness");
    head.add("th", "role");
    if (grid.merged) head.add("th", "machine");
    for (const auto& probe : t.probes)
        head.add("th", probe).set("scope", "col");
    Element tbody = table.add("tbody");
    for (const auto& r : t.rows) {
        Element row = tbody.add("tr");
        row.add("th", harness_label(r.harness, r.version)).set("scope", "row");
        row.add("td", r.role);
        if (grid.merged) row.add("td", r.machine);
        for (const Cell* cell : r.cells)
            add_cell(row, cell, grid);
    }
}

} // namespace

std::string render_html(const Matrix& matrix) {
    const Grid grid = build_grid(matrix);
    Markup doc(Markup::Kind::html, "html");
    Element html = doc.root();
    html.set("lang", "en");
    add_head(html, matrix);
    Element body = html.add("body");
    add_intro(body, matrix, grid);
    if (grid.tables.empty()) body.add("p", "No cells measured.");
    for (const auto& t : grid.tables)
        add_table(body, t, grid);
    add_legend(body, grid);
    return doc.str();
}

} // namespace sonata::reports
