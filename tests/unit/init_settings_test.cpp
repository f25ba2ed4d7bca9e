// `sonata init`'s pure parts: the hook command's quoting and recognition, settings edits compared
// as whole texts, and the commented sonata.toml, which must hold only keys config accepts.
#include <regex>
#include <sstream>

#include <gtest/gtest.h>

#include "cli/init_support.hpp"
#include "cli/plugin_source.hpp"
#include "core/config.hpp"
#include "tests/support/scratch_dir.hpp"
#include "tests/support/sonata_run.hpp"

namespace sonata::cli {
namespace {

const std::string k_command = "/opt/sonata/bin/sonata hook";

TEST(HookCommand, QuotesOnlyWhenTheShellWouldSplitOrExpand) {
    EXPECT_EQ(hook_command("/usr/local/bin/sonata"), "/usr/local/bin/sonata hook");
    EXPECT_EQ(hook_command("/home/a b/sonata"), "'/home/a b/sonata' hook");
    EXPECT_EQ(hook_command("/x/it's/$HOME/sonata"), "'/x/it'\\''s/$HOME/sonata' hook");
    EXPECT_EQ(hook_command("/usr/local/bin/sonata-hook"), "/usr/local/bin/sonata-hook");
    EXPECT_EQ(hook_command("/home/a b/sonata-hook"), "'/home/a b/sonata-hook'");
}

TEST(HookCommand, RecognisesWhatInitWritesForAnySonataPath) {
    for (const std::string& path :
         std::vector<std::string>{"/usr/local/bin/sonata", "/home/a b/sonata", "/x/it's/sonata",
                                  "/usr/local/bin/sonata-hook", "/home/a b/sonata-hook"}) {
        EXPECT_TRUE(is_sonata_hook_command(hook_command(path))) << path;
    }
    for (const char* other :
         {"/usr/bin/sonatas hook", "sonata hook", "/usr/bin/sonata hook --x", "/usr/bin/sonata",
          "/usr/bin/sonata  hook", "'/a b/sonata hook", "/a b/sonata hook", "/bin/other hook",
          "/usr/bin/sonata hook; rm -rf /", "$HOME/sonata hook", "/usr/bin/sonata-hook hook",
          "sonata-hook", "/usr/bin/sonata-hooks", "/usr/bin/sonata-hook --x", "'/a b/sonata-hook",
          "/usr/bin/sonata-hook; rm -rf /"}) {
        EXPECT_FALSE(is_sonata_hook_command(other)) << other;
    }
}

TEST(InstallHook, IntoNoFileWritesOnlyTheHook) {
    auto edit = install_hook(std::nullopt, k_command, "s.json");
    ASSERT_TRUE(edit) << edit.error().message;
    EXPECT_EQ(edit->text, R"({
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "*",
        "hooks": [
          {
            "type": "command",
            "command": "/opt/sonata/bin/sonata hook"
          }
        ]
      }
    ]
  }
}
)");
    EXPECT_TRUE(edit->changed);
    EXPECT_TRUE(edit->added);
    EXPECT_EQ(edit->removed, std::vector<std::string>{});
}

const std::string k_user_settings = R"json({
  "permissions": {
    "allow": ["Bash(ls:*)"]
  },
  "hooks": {
    "PreToolUse": [
      {"matcher": "Bash", "hooks": [{"type": "command", "command": "/usr/bin/guard", "timeout": 5}]}
    ],
    "PostToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": "fmt"}]}]
  },
  "model": "opus",
  "zeta": 1.5e300
})json";

const std::string k_user_settings_with_hook = R"json({
  "permissions": {
    "allow": [
      "Bash(ls:*)"
    ]
  },
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [
          {
            "type": "command",
            "command": "/usr/bin/guard",
            "timeout": 5
          }
        ]
      },
      {
        "matcher": "*",
        "hooks": [
          {
            "type": "command",
            "command": "/opt/sonata/bin/sonata hook"
          }
        ]
      }
    ],
    "PostToolUse": [
      {
        "matcher": "Write",
        "hooks": [
          {
            "type": "command",
            "command": "fmt"
          }
        ]
      }
    ]
  },
  "model": "opus",
  "zeta": 1.5e+300
}
)json";

TEST(InstallHook, KeepsEverySettingInPlace) {
    auto edit = install_hook(k_user_settings, k_command, "s.json");
    ASSERT_TRUE(edit) << edit.error().message;
    EXPECT_EQ(edit->text, k_user_settings_with_hook);
}

TEST(InstallHook, SecondRunChangesNothing) {
    auto again = install_hook(k_user_settings_with_hook, k_command, "s.json");
    ASSERT_TRUE(again);
    EXPECT_FALSE(again->changed);
    EXPECT_EQ(again->text, k_user_settings_with_hook);
}

TEST(InstallHook, ReplacesTheHookOfAnotherSonataBinary) {
    auto old = install_hook(k_user_settings, "/old/place/sonata hook", "s.json");
    ASSERT_TRUE(old);
    auto edit = install_hook(old->text, k_command, "s.json");
    ASSERT_TRUE(edit);
    EXPECT_EQ(edit->text, k_user_settings_with_hook);
    EXPECT_EQ(edit->removed, std::vector<std::string>{"/old/place/sonata hook"});
    EXPECT_TRUE(edit->added);
}

const std::string k_user_settings_rendered = R"json({
  "permissions": {
    "allow": [
      "Bash(ls:*)"
    ]
  },
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [
          {
            "type": "command",
            "command": "/usr/bin/guard",
            "timeout": 5
          }
        ]
      }
    ],
    "PostToolUse": [
      {
        "matcher": "Write",
        "hooks": [
          {
            "type": "command",
            "command": "fmt"
          }
        ]
      }
    ]
  },
  "model": "opus",
  "zeta": 1.5e+300
}
)json";

TEST(UninstallHook, TakesOutExactlyWhatInstallAdded) {
    auto removed = uninstall_hook(k_user_settings_with_hook, "s.json");
    ASSERT_TRUE(removed);
    EXPECT_EQ(removed->text, k_user_settings_rendered);
    EXPECT_EQ(removed->removed, std::vector<std::string>{k_command});
    EXPECT_TRUE(removed->changed);

    auto only = install_hook(std::nullopt, k_command, "s.json");
    auto emptied = uninstall_hook(only->text, "s.json");
    EXPECT_EQ(emptied->text, "{}\n");
}

TEST(UninstallHook, KeepsAUserHookAddedToSonatasGroup) {
    const std::string text = R"({"hooks":{"PreToolUse":[{"matcher":"*","hooks":[)"
                             R"({"type":"command","command":"/opt/sonata/bin/sonata hook"},)"
                             R"({"type":"command","command":"/usr/bin/mine"}]}]}})";
    auto removed = uninstall_hook(text, "s.json");
    ASSERT_TRUE(removed);
    // A file on one line stays on one line.
    EXPECT_EQ(
        removed->text,
        R"({"hooks":{"PreToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"/usr/bin/mine"}]}]}})");
}

TEST(UninstallHook, WithoutASonataHookChangesNothing) {
    const std::string text = "{ \"hooks\" : {\"PreToolUse\": []}, \"a\": 1 }";
    auto removed = uninstall_hook(text, "s.json");
    ASSERT_TRUE(removed);
    EXPECT_FALSE(removed->changed);
    EXPECT_EQ(removed->text, text);
}

TEST(SettingsEdits, RefuseWhatIsNotASettingsObject) {
    for (const std::string& text :
         std::vector<std::string>{"", "{", "[]", "null", "{\"a\":1,}", "// c\n{}",
                                  R"({"hooks":[]})", R"({"hooks":{"PreToolUse":{}}})"}) {
        for (const auto& edit :
             {install_hook(text, k_command, "s.json"), uninstall_hook(text, "s.json")}) {
            ASSERT_FALSE(edit) << text;
            EXPECT_EQ(edit.error().code, ExitCode::bad_data) << text;
            EXPECT_EQ(edit.error().message.rfind("s.json: ", 0), 0U) << edit.error().message;
        }
    }
}

TEST(ProjectConfigTemplate, EveryCommentedSettingIsAcceptedAndShowsTheDefault) {
    std::istringstream lines{std::string(project_config_template())};
    const std::regex setting(R"(^# (\[[a-z.]+\]|[a-z_]+ = .*)$)");
    std::string uncommented;
    int settings = 0;
    for (std::string line; std::getline(lines, line);) {
        std::smatch match;
        if (std::regex_match(line, match, setting)) {
            uncommented += match[1].str() + "\n";
            ++settings;
        }
    }
    EXPECT_EQ(settings, 12);
    auto config = parse_config(uncommented, "sonata.toml");
    ASSERT_TRUE(config) << config.error().message << "\n" << uncommented;
    const Config defaults;
    EXPECT_EQ(config->gate, defaults.gate);
    EXPECT_EQ(config->budget, defaults.budget);
    EXPECT_EQ(config->session_max_age, defaults.session_max_age);
    EXPECT_EQ(config->version_timeout, defaults.version_timeout);
    EXPECT_EQ(config->probe_timeout, defaults.probe_timeout);
    EXPECT_EQ(config->roles.size(), 1U);
    EXPECT_EQ(config->harnesses.size(), 1U);
    auto as_is = parse_config(std::string(project_config_template()), "sonata.toml");
    ASSERT_TRUE(as_is);
    EXPECT_TRUE(as_is->roles.empty());
}

TEST(PluginMarketplace, IsFoundBesideAnInstalledSonataBeforeItsSourceTree) {
    testing::ScratchDir dir;
    const std::string installed = dir.make_dir("usr");
    const std::string source = dir.make_dir("src");
    for (const auto& tree : {installed + "/share/sonata", source})
        testing::write_text(tree + "/.claude-plugin/marketplace.json", "{}\n");
    const std::string exe = installed + "/bin/sonata";
    EXPECT_EQ(plugin_marketplace("", {}, exe, source).value_or(""), installed + "/share/sonata");
    EXPECT_EQ(plugin_marketplace("", {}, dir.path() + "/elsewhere/bin/sonata", source).value_or(""),
              source);
    // The npm package, whose bin/sonata is the binary: the plugin is the package's.
    const std::string package = dir.make_dir("node_modules/@sonata-cli/sonata");
    testing::write_text(package + "/.claude-plugin/marketplace.json", "{}\n");
    EXPECT_EQ(plugin_marketplace("", {}, package + "/bin/sonata", source).value_or(""), package);
    // An empty SONATA_MARKETPLACE_DIR is no place.
    EXPECT_EQ(plugin_marketplace("", {{"SONATA_MARKETPLACE_DIR", ""}}, exe, source).value_or(""),
              installed + "/share/sonata");
    const auto none = plugin_marketplace("", {}, dir.path() + "/x/bin/sonata", dir.path() + "/y");
    ASSERT_FALSE(none);
    EXPECT_EQ(none.error().code, ExitCode::usage);
    EXPECT_NE(none.error().message.find(dir.path() + "/x/share/sonata, " + dir.path() + "/x, " +
                                        dir.path() + "/y"),
              std::string::npos)
        << none.error().message;
}

} // namespace
} // namespace sonata::cli
