// The HTML report opened in headless Chromium (Debian's chromium package): the screenshot must show
// the colour-coded matrix, not a blank or broken page. The PNG is decoded with libpng.
#include <png.h>

#include <cstdlib>
#include <set>

#include <gtest/gtest.h>

#include "core/process.hpp"
#include "reports/grid.hpp"
#include "tests/support/report_fixtures.hpp"

namespace sonata {
namespace {

using testing::matrix_fixture;
using testing::Sandbox;

struct Rgb {
    int r = 0;
    int g = 0;
    int b = 0;
};

Rgb parse_hex(std::string_view hex) {
    const auto channel = [&](std::size_t at) {
        return static_cast<int>(std::strtol(std::string(hex.substr(at, 2)).c_str(), nullptr, 16));
    };
    return {channel(1), channel(3), channel(5)};
}

struct Screenshot {
    unsigned width = 0;
    unsigned height = 0;
    std::vector<unsigned char> rgb; ///< width × height × 3 bytes.

    std::size_t count(const Rgb& colour, int tolerance) const {
        std::size_t n = 0;
        for (std::size_t i = 0; i + 2 < rgb.size(); i += 3) {
            if (std::abs(rgb[i] - colour.r) <= tolerance &&
                std::abs(rgb[i + 1] - colour.g) <= tolerance &&
                std::abs(rgb[i + 2] - colour.b) <= tolerance) {
                ++n;
            }
        }
        return n;
    }

    std::size_t distinct_colours() const {
        std::set<unsigned> colours;
        for (std::size_t i = 0; i + 2 < rgb.size(); i += 3) {
            colours.insert((unsigned{rgb[i]} << 16U) | (unsigned{rgb[i + 1]} << 8U) |
                           unsigned{rgb[i + 2]});
        }
        return colours.size();
    }
};

std::optional<Screenshot> decode_png(const std::string& path) {
    png_image image{};
    image.version = PNG_IMAGE_VERSION;
    if (png_image_begin_read_from_file(&image, path.c_str()) == 0) return std::nullopt;
    image.format = PNG_FORMAT_RGB;
    Screenshot shot;
    shot.width = image.width;
    shot.height = image.height;
    shot.rgb.resize(PNG_IMAGE_SIZE(image));
    if (png_image_finish_read(&image, nullptr, shot.rgb.data(), 0, nullptr) == 0)
        return std::nullopt;
    return shot;
}

} // namespace

TEST(ReportHtmlChromium, TheMergedMatrixRendersInColour) {
    Sandbox box;
    const auto chromium =
        search_path("chromium", box.env().count("PATH") ? box.env().at("PATH") : "");
    if (!chromium) GTEST_SKIP() << "chromium is not installed (Debian package chromium)";
    const std::string page = box.path("report.html");
    const auto rendered =
        box.run_sonata({"report", "--format", "html", "--out", page,
                        matrix_fixture("linux-ci.json"), matrix_fixture("macos-ci.json")});
    ASSERT_EQ(rendered.exit_code, 0) << rendered.err;

    const std::string png = box.path("shot.png");
    ProcessRequest request;
    request.argv = {*chromium,
                    "--headless",
                    "--no-sandbox",
                    "--disable-gpu",
                    "--disable-quic",
                    "--no-first-run",
                    "--disable-background-networking",
                    "--disable-component-update",
                    "--disable-sync",
                    "--hide-scrollbars",
                    "--force-device-scale-factor=1",
                    "--user-data-dir=" + box.path("chromium-profile"),
                    "--screenshot=" + png,
                    "--window-size=1200,800",
                    "file://" + page};
    request.env = box.env();
    request.cwd = box.path("work");
    request.timeout = std::chrono::seconds(120);
    const auto run = make_system_runner()->run(request);
    ASSERT_TRUE(run) << run.error().message;
    ASSERT_EQ(run->exit_code, 0) << run->err;

    const auto shot = decode_png(png);
    ASSERT_TRUE(shot) << "chromium wrote no readable PNG at " << png << "\n" << run->err;
    EXPECT_EQ(shot->width, 1200U);
    EXPECT_EQ(shot->height, 800U);
    const std::size_t pixels = std::size_t{shot->width} * shot->height;
    const std::size_t white = shot->count({255, 255, 255}, 0);
    // Text, borders and coloured cells: a blank or error page has a handful of colours at most.
    EXPECT_GT(shot->distinct_colours(), 50U);
    EXPECT_GT(pixels - white, pixels / 20) << "less than 5% of the page is not white";
    // The verdict colours of the matrix itself: several enforced cells, the violated codex cell.
    EXPECT_GT(shot->count(parse_hex(reports::style_of(Verdict::enforced).colour), 2), 5000U);
    EXPECT_GT(shot->count(parse_hex(reports::style_of(Verdict::violated).colour), 2), 1000U);
    EXPECT_GT(shot->count(parse_hex(reports::style_of(Verdict::asked).colour), 2), 1000U);
}

} // namespace sonata
