// retroanim — command line (the contract is in docs/design.md and README.md).
#include <assimp/Exporter.hpp>
#include <assimp/Importer.hpp>
#include <assimp/postprocess.h>
#include <assimp/scene.h>

#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <map>
#include <tuple>
#include <set>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "retroanim/assimp.hpp"
#include "retroanim/ra_archive_internal.h"
#include "retroanim/ra_fbx.h"
#include "retroanim/ra_gltf.h"
#include "retroanim/ra_output.h"
#include "retroanim/ra_document.h"
#include "retroanim/lego_wdb.h"

#include <assimp/version.h>

namespace {

// ---- commands, their help, the man page and bash completion ----------------------------
// One table describes the command line: `help`, `COMMAND --help`, the man page
// (help man) and the bash completion (help completion) are all printed from it.
struct Command {
    const char *name;
    const char *synopsis; // after "retroanim "
    const char *summary;  // one line
    const char *details;  // the command's own flags, one per line ("FLAG\tWHAT")
    const char *flags;    // the flags it accepts, space-separated (for parsing and completion)
};

const Command kCommands[] = {
    {"formats", "formats", "list the formats, their extensions and how each is detected", "", ""},
    {"info", "info FILE", "summary: format, nodes, meshes, animations, durations, key counts, warnings", "", ""},
    {"dump", "dump [--source] FILE [-o OUT]", "JSON of the scene as Assimp consumers receive it",
     "--source\tthe file's own fields as stored, instead of the scene\n"
     "-o, --output OUT\twrite the JSON to OUT, whole or not at all (- or no -o: standard output)",
     "--source -o --output"},
    {"pose", "pose FILE --time T [--time T]... [--anim N] [-o OUT]",
     "JSON of every node's world transform at T seconds, by the game's own rules",
     "-t, --time T\tseconds; again for more times: one line of JSON per time\n"
     "--anim N\tthe animation (index from info; default 0)\n"
     "-o, --output OUT\twrite the JSON to OUT, whole or not at all (- or no -o: standard output)",
     "-t --time --anim -o --output"},
    {"convert",
     "convert IN OUT [--format ID] [--writer retroanim|assimp] [--gltf-visibility] [--fbx-euler-tolerance DEG]",
     "import IN and write OUT (.glb/.gltf and .fbx by retroanim's writers, other formats through Assimp)",
     "-f, --format ID\tthe export format (default: from OUT's extension)\n"
     "--writer W\tretroanim (default for glTF and FBX) or assimp (Assimp's exporters)\n"
     "--gltf-visibility\tvisibility keys also as KHR_node_visibility (retroanim's glTF writer)\n"
     "--fbx-euler-tolerance DEG\trotation error of linear Euler playback between FBX keys (default: from the scene)",
     "-f --format --writer --gltf-visibility --fbx-euler-tolerance"},
    {"batch", "batch IN_DIR OUT_DIR --format ID [-j N] [--writer W]",
     "convert every recognised file of IN_DIR (every animation of an archive) into OUT_DIR",
     "-f, --format ID\tthe export format (required)\n"
     "-j, --jobs N\tconversions at once (1 to 256; default 1)\n"
     "--writer W\tas for convert\n"
     "--gltf-visibility, --fbx-euler-tolerance DEG\tas for convert\n"
     "\ta format option applies to the files of the formats that declare it",
     "-f --format -j --jobs --writer --gltf-visibility --fbx-euler-tolerance"},
    {"list", "list ARCHIVE",
     "the animations in a .SI or .pak: index, id, name, kind, sizes, duration, group (a WORLD.WDB: its worlds, models, "
     "parts and textures)",
     "", ""},
    {"extract", "extract ARCHIVE OUT_DIR [--force]",
     "write each animation of an archive as a loose file (.ani; .ANIM with its skeleton as .CINF)",
     "--force\treplace existing files", "--force"},
    {"help", "help [COMMAND|options]", "this help, a command's help, or every option key", "", ""},
};

const Command *FindCommand(const std::string &name)
{
    for (const auto &c : kCommands)
        if (name == c.name) return &c;
    return nullptr;
}

const char *kCommon = "--option KEY=VALUE\ta format option (repeatable; retroanim help options lists them); also\n"
                      "\tfrom the environment variable RETROANIM_OPTIONS=\"k=v;k=v\" (a backslash escapes ; , \\)\n"
                      "-q, --quiet\tno summary lines\n"
                      "-h, --help\tthis command's help\n"
                      "--\tthe arguments after it are files, even when they start with -\n";
const char *kExitCodes =
    "exit codes: 0 ok, 1 the input could not be imported, 2 usage, 3 an output could not be written";

// Calls fn(flag, what) for each line "FLAG\tWHAT" of a flags text (a line
// without a tab continues the one before: an empty flag).
template <typename Fn> void ForEachFlag(const char *text, Fn fn)
{
    std::string t = text;
    for (size_t pos = 0; pos < t.size();) {
        size_t end = t.find('\n', pos);
        if (end == std::string::npos) end = t.size();
        std::string line = t.substr(pos, end - pos);
        size_t tab = line.find('\t');
        if (tab == std::string::npos) fn(std::string(), line);
        else fn(line.substr(0, tab), line.substr(tab + 1));
        pos = end + 1;
    }
}

void PrintFlags(FILE *out, const char *text)
{
    ForEachFlag(text, [out](const std::string &flag, const std::string &what) {
        std::fprintf(out, "  %-30s %s\n", flag.c_str(), what.c_str());
    });
}

void PrintOverview(FILE *out)
{
    std::fprintf(out, "usage: retroanim COMMAND [ARGS] [--option KEY=VALUE]... [--quiet]\n\ncommands:\n");
    for (const auto &c : kCommands) std::fprintf(out, "  %-9s %s\n", c.name, c.summary);
    std::fprintf(out, "\ncommon flags:\n");
    PrintFlags(out, kCommon);
    std::fprintf(
        out, "  %-30s %s\n\n%s\nretroanim help COMMAND shows a command's arguments; retroanim --version the version\n",
        "--version", "the version", kExitCodes);
}

void PrintCommandHelp(FILE *out, const Command &c)
{
    std::fprintf(out, "usage: retroanim %s\n\n%s\n", c.synopsis, c.summary);
    if (*c.details) {
        std::fprintf(out, "\n");
        PrintFlags(out, c.details);
    }
    std::fprintf(out, "\ncommon flags:\n");
    PrintFlags(out, kCommon);
    std::fprintf(out, "\n%s\n", kExitCodes);
}

// "converted|native" -> "converted, native"; numbers -> their range
std::string OptionSpec(const ra_option_decl &d)
{
    char buf[160];
    switch (d.type) {
    case RA_OPT_BOOL: return "true|false";
    case RA_OPT_ENUM: return d.values;
    case RA_OPT_INT: std::snprintf(buf, sizeof buf, "%.15g..%.15g", d.min, d.max); return buf;
    case RA_OPT_SIZE: std::snprintf(buf, sizeof buf, "BYTES (%.15g..%.15g; K, M, G)", d.min, d.max); return buf;
    case RA_OPT_DOUBLE:
        std::snprintf(buf, sizeof buf, "%c%.15g, %.15g]", d.min_exclusive ? '(' : '[', d.min, d.max);
        return buf;
    case RA_OPT_PATH: return "PATH";
    case RA_OPT_STRING: return "TEXT";
    }
    return "?";
}

void PrintOptionTable(FILE *out, const ra_option_decl *t, size_t n)
{
    for (size_t i = 0; i < n; i++)
        std::fprintf(out, "  %s=%s\n      %s (default: %s)\n", t[i].key, OptionSpec(t[i]).c_str(), t[i].help, t[i].def);
}

// every option, grouped: the common keys, then each group of formats with the same own keys
void PrintOptions(FILE *out)
{
    size_t n = 0;
    const ra_option_decl *common = ra_common_options(&n);
    std::fprintf(out, "options (--option KEY=VALUE, RETROANIM_OPTIONS, the Assimp property RETROANIM_OPTIONS);\n"
                      "an unknown key or a bad value is refused (exit 2)\n\nevery format:\n");
    PrintOptionTable(out, common, n);
    std::vector<const ra_option_decl *> done;
    for (size_t i = 0; i < ra_format_count(); i++) {
        size_t k = 0;
        const ra_option_decl *t = ra_format_options(ra_format_at(i), &k);
        if (!k || std::find(done.begin(), done.end(), t) != done.end()) continue;
        done.push_back(t);
        std::string who;
        for (size_t j = 0; j < ra_format_count(); j++) {
            size_t kj = 0;
            if (ra_format_options(ra_format_at(j), &kj) == t)
                who += std::string(who.empty() ? "" : ", ") + ra_format_id(ra_format_at(j));
        }
        std::fprintf(out, "\n%s:\n", who.c_str());
        PrintOptionTable(out, t, k);
    }
    std::fprintf(out, "\n.SI, .pak and .big archives also take the options of the format of their animations.\n");
}

// troff for man(1), from the same tables
std::string Roff(std::string s)
{
    std::string o;
    for (char c : s) {
        if (c == '\\') o += "\\e";
        else if (c == '-') o += "\\-";
        else o += c;
    }
    if (!o.empty() && (o[0] == '.' || o[0] == '\'')) o = "\\&" + o;
    return o;
}

void RoffFlags(FILE *out, const char *text)
{
    ForEachFlag(text, [out](const std::string &flag, const std::string &what) {
        std::fprintf(out, ".TP\n.B %s\n%s\n", Roff(flag).c_str(), Roff(what).c_str());
    });
}

void PrintMan(FILE *out)
{
    std::fprintf(out, ".TH RETROANIM 1 \"\" \"retroanim %s\" \"User Commands\"\n", ra_version_string());
    std::fprintf(out, ".SH NAME\nretroanim \\- animations of classic games to glTF, FBX and Assimp\n");
    std::fprintf(out, ".SH SYNOPSIS\n");
    for (const auto &c : kCommands) std::fprintf(out, ".B retroanim\n%s\n.br\n", Roff(c.synopsis).c_str());
    std::fprintf(out,
                 ".SH DESCRIPTION\nretroanim reads the animation formats of LEGO Island (.ani, .SI), Metroid Prime "
                 "(ANIM, CINF, .pak), World of Goo (.binltl), the Nintendo 64 SDK (NIFF) and Homeworld (.mad), plays "
                 "them by the games' rules and writes them as glTF 2.0, FBX or any format of Assimp.\n");
    std::fprintf(out, ".SH COMMANDS\n");
    for (const auto &c : kCommands) {
        std::fprintf(out, ".SS %s\n%s\n", Roff(c.synopsis).c_str(), Roff(c.summary).c_str());
        if (*c.details) RoffFlags(out, c.details);
    }
    std::fprintf(out, ".SH COMMON FLAGS\n");
    RoffFlags(out, kCommon);
    std::fprintf(out, ".TP\n.B \\-\\-version\nthe version\n");
    std::fprintf(out,
                 ".SH OPTIONS\nFormat options are KEY=VALUE pairs given with \\-\\-option, in the environment "
                 "variable RETROANIM_OPTIONS, or in the Assimp importer property RETROANIM_OPTIONS. An unknown key "
                 "or a bad value is refused with exit code 2.\n");
    size_t n = 0;
    const ra_option_decl *common = ra_common_options(&n);
    auto table = [&](const ra_option_decl *t, size_t k) {
        for (size_t i = 0; i < k; i++)
            std::fprintf(out, ".TP\n.B %s=%s\n%s (default: %s)\n", Roff(t[i].key).c_str(),
                         Roff(OptionSpec(t[i])).c_str(), Roff(t[i].help).c_str(), Roff(t[i].def).c_str());
    };
    std::fprintf(out, ".SS every format\n");
    table(common, n);
    for (size_t i = 0; i < ra_format_count(); i++) {
        size_t k = 0;
        const ra_option_decl *t = ra_format_options(ra_format_at(i), &k);
        if (k && !ra_format_is_archive(ra_format_at(i))) {
            std::fprintf(out, ".SS %s\n", ra_format_id(ra_format_at(i)));
            table(t, k);
        }
    }
    std::fprintf(
        out, ".SH EXIT STATUS\n0 ok, 1 the input could not be imported, 2 usage, 3 an output could not be written.\n");
    std::fprintf(out,
                 ".SH ENVIRONMENT\n.TP\n.B RETROANIM_OPTIONS\nformat options, \"k=v;k=v\" (a backslash escapes ; , and "
                 "\\e); \\-\\-option values take precedence\n");
}

void PrintCompletion(FILE *out)
{
    std::string cmds, keys;
    for (const auto &c : kCommands) cmds += std::string(cmds.empty() ? "" : " ") + c.name;
    std::set<std::string> ks;
    size_t n = 0;
    const ra_option_decl *common = ra_common_options(&n);
    for (size_t i = 0; i < n; i++) ks.insert(common[i].key);
    for (size_t f = 0; f < ra_format_count(); f++) {
        const ra_option_decl *t = ra_format_options(ra_format_at(f), &n);
        for (size_t i = 0; i < n; i++) ks.insert(t[i].key);
    }
    for (const auto &k : ks) keys += (keys.empty() ? "" : " ") + k + "=";
    std::fprintf(
        out,
        "# bash completion for retroanim (generated by retroanim help completion)\n"
        "_retroanim() {\n"
        "    local cur prev cmd\n"
        "    cur=${COMP_WORDS[COMP_CWORD]}\n"
        "    prev=${COMP_WORDS[COMP_CWORD-1]}\n"
        "    cmd=${COMP_WORDS[1]}\n"
        "    if [ \"$COMP_CWORD\" -eq 1 ]; then\n"
        "        COMPREPLY=($(compgen -W \"%s --help --version\" -- \"$cur\")); return\n"
        "    fi\n"
        "    case $prev in\n"
        "        --option) compopt -o nospace 2>/dev/null; COMPREPLY=($(compgen -W \"%s\" -- \"$cur\")); return;;\n"
        "        --writer) COMPREPLY=($(compgen -W \"retroanim assimp\" -- \"$cur\")); return;;\n"
        "        help) COMPREPLY=($(compgen -W \"%s options\" -- \"$cur\")); return;;\n"
        "    esac\n"
        "    local flags=\"--option --quiet --help\"\n"
        "    case $cmd in\n",
        cmds.c_str(), keys.c_str(), cmds.c_str());
    for (const auto &c : kCommands)
        if (*c.flags) std::fprintf(out, "        %s) flags=\"$flags %s\";;\n", c.name, c.flags);
    std::fprintf(out, "    esac\n"
                      "    if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W \"$flags\" -- \"$cur\")); return; fi\n"
                      "    COMPREPLY=($(compgen -f -- \"$cur\"))\n"
                      "}\n"
                      "complete -o filenames -F _retroanim retroanim\n");
}

// A usage error: one line, then where to look; exit code 2.
std::string g_command; // the command being run, for Usage
int Usage(const std::string &msg)
{
    if (!msg.empty()) std::fprintf(stderr, "retroanim: %s\n", msg.c_str());
    const Command *c = FindCommand(g_command);
    if (c && c->name != std::string("help"))
        std::fprintf(stderr, "usage: retroanim %s\n(retroanim help %s for more)\n", c->synopsis, c->name);
    else std::fprintf(stderr, "usage: retroanim COMMAND [ARGS]... (retroanim help lists the commands)\n");
    return 2;
}

struct Args {
    std::vector<std::string> pos;
    std::vector<std::string> option_strings; // "k=v"
    bool quiet = false;
    bool help = false;
    bool source = false;
    bool gltf_visibility = false;   // --gltf-visibility: KHR_node_visibility in retroanim's glTF
    bool force = false;             // extract --force: replace existing files
    double fbx_euler_tolerance = 0; // --fbx-euler-tolerance DEG (radians here; 0: automatic)
    std::vector<std::string> times;
    std::string anim, format, jobs, writer, output;
};

bool ParseNumber(const std::string &s, double &v);

// GNU-style: --name VALUE or --name=VALUE, -x VALUE, -- ends the flags, -
// alone is an argument (standard input or output)
bool ParseArgs(int argc, char **argv, const Command &cmd, Args &a, std::string &err)
{
    std::string allowed = std::string(" ") + cmd.flags + " --option --quiet -q --help -h ";
    bool flags_done = false;
    for (int i = 2; i < argc; i++) {
        std::string s = argv[i];
        if (flags_done || s == "-" || s.size() < 2 || s[0] != '-') {
            a.pos.push_back(s);
            continue;
        }
        if (s == "--") {
            flags_done = true;
            continue;
        }
        std::string name = s, inline_value;
        bool has_inline = false;
        if (s.compare(0, 2, "--") == 0 && s.find('=') != std::string::npos) {
            name = s.substr(0, s.find('='));
            inline_value = s.substr(s.find('=') + 1);
            has_inline = true;
        } else if (s.size() > 2 && s.compare(0, 2, "-j") == 0) {
            name = "-j";
            inline_value = s.substr(2);
            has_inline = true;
        }
        if (allowed.find(" " + name + " ") == std::string::npos) {
            err = "unknown flag " + name + " for " + cmd.name;
            return false;
        }
        auto value = [&](std::string &out) {
            if (has_inline) {
                out = inline_value;
                return true;
            }
            if (i + 1 >= argc) {
                err = name + " needs a value";
                return false;
            }
            out = argv[++i];
            return true;
        };
        auto no_value = [&]() {
            if (has_inline) err = name + " takes no value";
            return !has_inline;
        };
        if (name == "--quiet" || name == "-q") {
            if (!no_value()) return false;
            a.quiet = true;
        } else if (name == "--help" || name == "-h") {
            if (!no_value()) return false;
            a.help = true;
        } else if (name == "--source") {
            if (!no_value()) return false;
            a.source = true;
        } else if (name == "--gltf-visibility") {
            if (!no_value()) return false;
            a.gltf_visibility = true;
        } else if (name == "--force") {
            if (!no_value()) return false;
            a.force = true;
        } else if (name == "--option") {
            std::string v;
            if (!value(v)) return false;
            if (v.find('=') == std::string::npos || v[0] == '=') {
                err = "--option wants KEY=VALUE, got '" + v + "'";
                return false;
            }
            a.option_strings.push_back(v);
        } else if (name == "--time" || name == "-t") {
            std::string t;
            if (!value(t)) return false;
            a.times.push_back(t);
        } else if (name == "--anim") {
            if (!value(a.anim)) return false;
        } else if (name == "--output" || name == "-o") {
            if (!value(a.output)) return false;
        } else if (name == "--format" || name == "-f") {
            if (!value(a.format)) return false;
        } else if (name == "--writer") {
            if (!value(a.writer)) return false;
            if (a.writer != "retroanim" && a.writer != "assimp") {
                err = "--writer wants retroanim or assimp, got '" + a.writer + "'";
                return false;
            }
        } else if (name == "--fbx-euler-tolerance") {
            std::string v;
            double d = 0;
            if (!value(v)) return false;
            if (!ParseNumber(v, d) || !(d >= 1e-5 && d <= 10)) {
                err = "--fbx-euler-tolerance wants degrees from 0.00001 to 10, got '" + v + "'";
                return false;
            }
            a.fbx_euler_tolerance = d * M_PI / 180;
        } else if (name == "-j" || name == "--jobs") {
            if (!value(a.jobs)) return false;
        }
    }
    return true;
}

// The options of a run: RETROANIM_OPTIONS first, then each --option (a key
// given twice keeps its last value).  Keys and values are owned here.
struct Options {
    std::vector<std::string> keys, values;
    ra_options opt;
    // "k=v;k=v" for the Assimp property, values escaped (ra_options_escape)
    std::string Joined(const ra_format *only = nullptr) const
    {
        std::string j;
        for (size_t i = 0; i < keys.size(); i++) {
            if (only && !ra_option_find(only, keys[i].c_str())) continue;
            std::vector<char> buf(2 * values[i].size() + 1);
            ra_options_escape(values[i].c_str(), buf.data(), buf.size());
            j += (j.empty() ? "" : ";") + keys[i] + "=" + buf.data();
        }
        return j;
    }
    // the options a file of format f takes: all of them, or (batch) the
    // keys f declares
    ra_options For(const ra_format *f, bool only_declared) const
    {
        ra_options o;
        ra_options_init(&o);
        for (size_t i = 0; i < keys.size(); i++)
            if (!only_declared || ra_option_find(f, keys[i].c_str()))
                ra_options_add(&o, keys[i].c_str(), values[i].c_str());
        return o;
    }
    void Set(const std::string &k, const std::string &v)
    {
        for (size_t i = 0; i < keys.size(); i++)
            if (keys[i] == k) {
                values[i] = v;
                return;
            }
        keys.push_back(k);
        values.push_back(v);
    }
    void Finish()
    {
        ra_options_init(&opt);
        for (size_t i = 0; i < keys.size(); i++) ra_options_add(&opt, keys[i].c_str(), values[i].c_str());
    }
};

// Builds the options from the environment and the flags; false (err) when
// malformed or too many.
bool MakeOptions(const std::vector<std::string> &flags, Options &o, std::string &err)
{
    if (const char *env = std::getenv("RETROANIM_OPTIONS")) {
        ra_options e;
        ra_options_init(&e);
        std::vector<char> store(std::strlen(env) + 1);
        if (!ra_options_parse_list(&e, env, store.data(), store.size())) {
            err = std::string("RETROANIM_OPTIONS: malformed '") + env +
                  "' (want key=value;key=value, a backslash before ';', ',' or '\\' in a value)";
            return false;
        }
        for (size_t i = 0; i < e.count; i++) o.Set(e.keys[i], e.values[i]);
    }
    for (const auto &s : flags) {
        size_t eq = s.find('=');
        o.Set(s.substr(0, eq), s.substr(eq + 1));
    }
    if (o.keys.size() > RA_MAX_OPTIONS) {
        err = "too many options (at most " + std::to_string(RA_MAX_OPTIONS) + ")";
        return false;
    }
    o.Finish();
    return true;
}

// "FORMAT: message (field) (at byte N)"; errors of no format (a file that
// cannot be opened) without the "retroanim: " of their format field
std::string FormatError(const ra_error &e)
{
    char buf[RA_ERROR_TEXT_MAX];
    ra_error_format(&e, buf, sizeof buf);
    std::string s = buf;
    if (e.format && std::strcmp(e.format, "retroanim") == 0 && s.compare(0, 11, "retroanim: ") == 0) s = s.substr(11);
    return s;
}

// One error line: "retroanim: FILE: FORMAT: message"; exit code 1
int Fail(const std::string &file, const std::string &what)
{
    std::fprintf(stderr, "retroanim: %s: %s\n", file.c_str(), what.c_str());
    return 1;
}

// Exit code of a refused input: 2 when an option (or argument) is what is wrong
int ExitFor(ra_status st) { return st == RA_ERR_USAGE ? 2 : 1; }

// The common options' values, checked before a file is opened (the format's
// own keys are checked once the format is known)
bool CheckCommonOptions(const ra_options &opt, ra_error &err)
{
    return ra_options_validate_known(&opt, nullptr, &err) == RA_OK;
}

// A file's bytes in the buffer they were read into (ra_malloc'd, not copied)
class FileBytes {
  public:
    FileBytes() = default;
    FileBytes(const FileBytes &) = delete;
    FileBytes &operator=(const FileBytes &) = delete;
    ~FileBytes() { ra_file_bytes_free(&bytes_); }
    const uint8_t *data() const { return bytes_.data; }
    size_t size() const { return bytes_.size; }
    // bytes as ra_file_bytes_get gives them (mapped or ra_malloc'd)
    void Take(const ra_file_bytes &bytes)
    {
        ra_file_bytes_free(&bytes_);
        bytes_ = bytes;
    }

  private:
    ra_file_bytes bytes_ = {};
};

struct Loaded {
    FileBytes bytes;
    ra_document *doc = nullptr;
    ~Loaded() { ra_document_free(doc); }
};

// The file's bytes (- is standard input) into `bytes`; false (with err) if it
// cannot be read or has more than the option max_file_size (checked before
// it is read).
bool ReadBytes(const std::string &file, const ra_options &opt, FileBytes &bytes, ra_error &err)
{
    size_t max = ra_max_file_size(&opt);
    if (file == "-") {
        uint8_t *data = nullptr;
        size_t size = 0;
        if (ra_read_stream_max(stdin, 0, max, "the input", &data, &size, &err) != RA_OK) return false;
        bytes.Take(ra_file_bytes{data, size, nullptr});
        return true;
    }
    ra_file_bytes f;
    if (ra_file_bytes_get(file.c_str(), max, &f, &err) != RA_OK) return false;
    bytes.Take(f);
    return true;
}

// 0 ok; otherwise prints the error line and returns the exit code
int Load(const std::string &file, const ra_options &opt, bool scene, Loaded &out)
{
    ra_error err;
    ra_error_clear(&err);
    if (!CheckCommonOptions(opt, err)) {
        Fail(file, FormatError(err));
        return 2;
    }
    if (!ReadBytes(file, opt, out.bytes, err)) return Fail(file, FormatError(err));
    size_t size = out.bytes.size();
    const char *name = file == "-" ? nullptr : file.c_str();
    ra_status st = scene ? ra_document_load(out.bytes.data(), size, name, &opt, &out.doc, &err)
                         : ra_document_read(out.bytes.data(), size, name, &opt, &out.doc, &err);
    if (st != RA_OK) {
        Fail(file, FormatError(err));
        return ExitFor(st);
    }
    return 0;
}

// Text for stdout (out empty or "-": streamed as it comes) or for a file
// (written whole or not at all at the end).  Exit code 3 when it cannot be written.
struct TextOut {
    std::string path;
    ra_writer w;
    explicit TextOut(const std::string &p) : path(p == "-" ? "" : p) { ra_writer_init(&w); }
    ~TextOut() { ra_writer_free(&w); }
    void Init(ra_json &j, bool pretty)
    {
        if (path.empty()) ra_json_init_file(&j, stdout, pretty);
        else ra_json_init_buffer(&j, &w, pretty);
    }
    int Commit(bool failed)
    {
        if (failed || w.failed) {
            std::fprintf(stderr, "retroanim: %s: the output could not be written\n", path.empty() ? "-" : path.c_str());
            return 3;
        }
        if (path.empty()) return std::fflush(stdout) == 0 ? 0 : 3;
        ra_error err;
        ra_error_clear(&err);
        if (ra_write_file(path.c_str(), w.data, w.size, &err) != RA_OK) {
            std::fprintf(stderr, "retroanim: %s: %s\n", path.c_str(), FormatError(err).c_str());
            return 3;
        }
        return 0;
    }
};

// An output that is the input file is refused (exit 3, nothing written)
bool OutputIsInput(const std::string &in, const std::string &out);

int CmdFormats()
{
    size_t n = 0;
    const ra_format *const *f = ra_formats(&n);
    std::printf("%-16s %-12s %s\n", "id", "extensions", "name / detection");
    for (size_t i = 0; i < n; i++)
        std::printf("%-16s %-12s %s\n%-29s detected by: %s\n", f[i]->id, f[i]->extensions[0] ? f[i]->extensions : "-",
                    f[i]->name, "", f[i]->detection);
    return 0;
}

size_t KeyCount(const ra_animation &a)
{
    size_t k = 0;
    for (size_t c = 0; c < a.channel_count; c++)
        k += a.channels[c].position_count + a.channels[c].rotation_count + a.channels[c].scaling_count;
    return k;
}

int CmdInfo(const Args &a, const Options &o)
{
    if (a.pos.size() != 1) return Usage("info takes one FILE");
    Loaded l;
    if (int rc = Load(a.pos[0], o.opt, true, l)) return rc;
    const ra_scene &s = l.doc->scene;
    std::printf("file:       %s (%zu bytes)\n", a.pos[0].c_str(), l.bytes.size());
    std::printf("format:     %s — %s\n", l.doc->format->id, l.doc->format->name);
    std::printf("nodes:      %zu (including RootNode)\n", s.node_count);
    std::printf("cameras:    %zu\n", s.camera_count);
    if (s.mesh_count || s.material_count || s.texture_count) {
        size_t verts = 0, tris = 0;
        for (size_t i = 0; i < s.mesh_count; i++) verts += s.meshes[i].vertex_count, tris += s.meshes[i].triangle_count;
        std::printf("meshes:     %zu (%zu vertices, %zu triangles), %zu material(s), %zu texture(s)\n", s.mesh_count,
                    verts, tris, s.material_count, s.texture_count);
    }
    std::printf("animations: %zu\n", s.animation_count);
    for (size_t i = 0; i < s.animation_count; i++) {
        const ra_animation &an = s.animations[i];
        std::printf("  [%zu] %s: %.3f s, native rate %g ticks/s, %zu channels, %zu keys\n", i, an.name, an.duration,
                    an.ticks_per_second, an.channel_count, KeyCount(an));
        for (size_t c = 0; c < an.channel_count; c++) {
            const ra_channel &ch = an.channels[c];
            std::printf("      %-24s pos %zu, rot %zu, scale %zu\n", s.nodes[ch.node].name, ch.position_count,
                        ch.rotation_count, ch.scaling_count);
        }
    }
    std::printf("warnings:   %zu\n", s.warning_count);
    for (size_t i = 0; i < s.warning_count; i++)
        std::printf("  - %s%s\n", s.warnings[i].msg,
                    s.warnings[i].count > 1 ? (" (x" + std::to_string(s.warnings[i].count) + ")").c_str() : "");
    return 0;
}

int CmdDump(const Args &a, const Options &o)
{
    if (a.pos.size() != 1) return Usage("dump takes one FILE");
    if (OutputIsInput(a.pos[0], a.output)) return 3;
    Loaded l;
    if (int rc = Load(a.pos[0], o.opt, !a.source, l)) return rc;
    if (a.source && !l.doc->format->dump_source)
        return Fail(a.pos[0], std::string(l.doc->format->id) + ": this format has no source dump");
    TextOut out(a.output);
    ra_json j;
    out.Init(j, true);
    if (a.source) l.doc->format->dump_source(l.doc, &j);
    else ra_scene_dump_json(&l.doc->scene, &j);
    ra_json_finish(&j);
    return out.Commit(j.failed);
}

bool ParseNumber(const std::string &s, double &v)
{
    char *end = nullptr;
    v = std::strtod(s.c_str(), &end);
    return !s.empty() && end && *end == 0 && std::isfinite(v);
}

int CmdPose(const Args &a, const Options &o)
{
    if (a.pos.size() != 1) return Usage("pose takes one FILE");
    double an = 0;
    std::vector<double> times;
    for (const auto &ts : a.times) {
        double t = 0;
        if (!ParseNumber(ts, t)) return Usage("pose needs --time T (seconds)");
        times.push_back(t);
    }
    if (times.empty()) return Usage("pose needs --time T (seconds)");
    if (!a.anim.empty() && (!ParseNumber(a.anim, an) || an < 0 || an != (double)(size_t)an))
        return Usage("--anim wants an animation index");
    if (OutputIsInput(a.pos[0], a.output)) return 3;
    Loaded l;
    if (int rc = Load(a.pos[0], o.opt, true, l)) return rc;
    const ra_scene &s = l.doc->scene;
    if (s.animation_count && (size_t)an >= s.animation_count)
        return Usage("--anim " + a.anim + ": the file has " + std::to_string(s.animation_count) + " animation(s)");
    std::vector<ra_mat4> world(s.node_count);
    TextOut out(a.output);
    // one line of JSON per --time, in the order given
    for (double t : times) {
        ra_error err;
        ra_error_clear(&err);
        if (ra_document_pose(l.doc, (size_t)an, t, world.data(), &err) != RA_OK) {
            Fail(a.pos[0], FormatError(err));
            return ExitFor(err.code);
        }
        ra_json j;
        out.Init(j, false);
        ra_json_begin_object(&j);
        ra_json_key(&j, "time");
        ra_json_number(&j, t);
        ra_json_key(&j, "nodes");
        ra_json_begin_array(&j);
        for (size_t i = 0; i < s.node_count; i++) {
            ra_json_begin_object(&j);
            ra_json_key(&j, "name");
            ra_json_string(&j, s.nodes[i].name);
            ra_json_key(&j, "world");
            ra_json_begin_array(&j);
            for (int r = 0; r < 4; r++)
                for (int c = 0; c < 4; c++) ra_json_number(&j, world[i].m[r][c]);
            ra_json_end_array(&j);
            ra_json_end_object(&j);
        }
        ra_json_end_array(&j);
        ra_json_end_object(&j);
        ra_json_finish(&j);
        if (j.failed) return out.Commit(true);
    }
    return out.Commit(false);
}

std::string Lower(std::string s)
{
    for (auto &c : s) c = (char)std::tolower((unsigned char)c);
    return s;
}

std::string ExtensionOf(const std::string &path)
{
    size_t slash = path.find_last_of('/');
    size_t dot = path.find_last_of('.');
    if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return "";
    return Lower(path.substr(dot + 1));
}

// Exporter id for an output extension: "glb"/"gltf" (glTF 2.0, retroanim's
// writer unless --writer assimp), else Assimp's exporter for it.
std::string ExportIdFor(const std::string &ext)
{
    if (ext == "gltf") return "gltf";
    if (ext == "glb") return "glb";
    if (ext == "dae") return "collada";
    Assimp::Exporter ex;
    for (size_t i = 0; i < ex.GetExportFormatCount(); i++) {
        const aiExportFormatDesc *d = ex.GetExportFormatDescription(i);
        if (Lower(d->fileExtension) == ext) return d->id;
    }
    return "";
}

std::string ExtensionForExportId(const std::string &id)
{
    if (id == "glb" || id == "glb2") return "glb";
    if (id == "gltf" || id == "gltf2") return "gltf";
    Assimp::Exporter ex;
    for (size_t i = 0; i < ex.GetExportFormatCount(); i++) {
        const aiExportFormatDesc *d = ex.GetExportFormatDescription(i);
        if (id == d->id) return d->fileExtension;
    }
    return "";
}

bool ExportIdKnown(const std::string &id) { return !ExtensionForExportId(id).empty(); }

// Outputs refused because they do not load back: Assimp's Collada exporter
// writes animation references that Assimp's own importer cannot resolve
// ("Unable to resolve library reference") and files that crash Blender's
// Collada importer.  Empty when the id may be written.
std::string RefusedExport(const std::string &id)
{
    if (id != "collada") return "";
    return "Collada (.dae) is not written: Assimp's Collada exporter writes animated scenes that Assimp and "
           "Blender do not load back; write .glb or .gltf (glTF 2.0) or .fbx (binary FBX) instead";
}

// Imports through Assimp with our importers; the hint routes files whose
// extension no importer claims (body-only LEGO data) by their detected format.
struct Converted {
    size_t nodes = 0, animations = 0, keys = 0, cameras = 0, meshes = 0, textures = 0;
    uint64_t bytes = 0;
    std::string writer;         // what wrote the file, for the summary
    bool output_failed = false; // the input was fine, the output could not be written
    bool usage = false;         // an option (or its value) was refused
};

// The writer of an export id: retroanim's own for glTF 2.0 (ids glb, gltf and
// Assimp's glb2, gltf2) unless --writer assimp; Assimp's id otherwise.
struct Target {
    std::string id; // Assimp's exporter id, or "glb"/"gltf" for retroanim's writer
    bool own = false;
    bool visibility = false;    // retroanim's writer: KHR_node_visibility
    double euler_tolerance = 0; // retroanim's FBX writer: ra_fbx_options.euler_tolerance
};
Target TargetFor(const std::string &id, const std::string &writer)
{
    bool gltf = id == "glb" || id == "gltf" || id == "glb2" || id == "gltf2";
    if (id == "fbx" && writer != "assimp") return {id, true};
    if (gltf && writer != "assimp") return {id.substr(0, id[1] == 'l' && id[2] == 'b' ? 3 : 4), true};
    if (gltf) return {id[1] == 'l' && id[2] == 'b' ? "glb2" : "gltf2", false};
    return {id, false};
}

// The most nodes a scene may have on its way through Assimp's exporters
// unless the user sets max_nodes (README, options).
constexpr size_t kAssimpMaxNodes = 5000;

// true when a and b name the same file (through links)
bool SameFile(const std::string &a, const std::string &b)
{
    struct stat sa, sb;
    return stat(a.c_str(), &sa) == 0 && stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

bool OutputIsInput(const std::string &in, const std::string &out)
{
    if (out.empty() || out == "-" || in == "-" || !SameFile(in, out)) return false;
    std::fprintf(stderr, "retroanim: %s: is the input file; choose another output\n", out.c_str());
    return true;
}

// Assimp's FBX exporter writes rotations as Euler curves, converting each key
// alone; between two keys a rotation past 90 degrees of pitch switches the
// Euler branch, so components jump by 180 degrees or more.  three.js's
// FBXLoader slerps across such a jump but drops the key the jump ends on
// (unless the next interval jumps too), so the rotation misses that key.  A
// copy of every rotation key 1 ns after it keeps each key in every reader:
// the jump ends on the copy, which three.js's float32 times put at the key's
// own time (retroanim's key times are float32 already).
void RepeatRotationKeys(aiScene *sc)
{
    for (unsigned a = 0; a < sc->mNumAnimations; a++) {
        aiAnimation *an = sc->mAnimations[a];
        double tick = 1e-9 * (an->mTicksPerSecond > 0 ? an->mTicksPerSecond : 1.0);
        for (unsigned c = 0; c < an->mNumChannels; c++) {
            aiNodeAnim *ch = an->mChannels[c];
            unsigned n = ch->mNumRotationKeys;
            if (n < 2) continue;
            std::vector<aiQuatKey> keys;
            keys.reserve(2 * (size_t)n);
            for (unsigned k = 0; k < n; k++) {
                keys.push_back(ch->mRotationKeys[k]);
                double copy = ch->mRotationKeys[k].mTime + tick;
                if (k + 1 == n || ch->mRotationKeys[k + 1].mTime > copy + tick)
                    keys.push_back(aiQuatKey(copy, ch->mRotationKeys[k].mValue));
            }
            aiQuatKey *out = new aiQuatKey[keys.size()];
            std::copy(keys.begin(), keys.end(), out);
            delete[] ch->mRotationKeys;
            ch->mRotationKeys = out;
            ch->mNumRotationKeys = (unsigned)keys.size();
        }
    }
}

// Assimp writes an ASCII FBX property's numbers as "0, -0, 90".  three.js's
// FBXLoader replaces the first blank of a property value with '_' before it
// splits the numbers, so the second one reads as NaN, and a node whose rest
// transform is read from such a property (every unanimated node) becomes NaN
// with its whole subtree.  Writing the numbers without blanks ("0,-0,90", as
// FBX SDK files often do) is the same FBX to every other reader.
std::string CompactAsciiFbxNumbers(const std::string &text)
{
    std::string out;
    out.reserve(text.size());
    size_t pos = 0;
    while (pos < text.size()) {
        size_t end = text.find('\n', pos);
        end = end == std::string::npos ? text.size() : end + 1;
        std::string line = text.substr(pos, end - pos);
        pos = end;
        size_t p = line.find("P: \"");
        if (p != std::string::npos) {
            // the value follows the fourth "," (name, type, label, flags)
            size_t v = p;
            int fields = 0;
            while (fields < 4 && (v = line.find("\",", v)) != std::string::npos) {
                v += 2;
                fields++;
            }
            if (fields == 4 && line.find_first_not_of("0123456789+-.eE, \t\r\n", v) == std::string::npos) {
                std::string value;
                for (size_t i = v; i < line.size(); i++)
                    if (line[i] != ' ' || (i > v && line[i - 1] != ',')) value += line[i];
                line = line.substr(0, v) + value;
            }
        }
        out += line;
    }
    return out;
}

// Writes what Assimp exported to memory (ExportToBlob): every file whole or not
// at all (ra_write_file).  The first blob is OUT; each further one (a glTF's
// .bin) is OUT's stem + "." + its name, and the references to it in the first,
// which Assimp names after its "$blobfile" placeholder, get that stem.
bool WriteBlobs(const aiExportDataBlob *master, const std::string &out, bool compact_fbx, std::string &error)
{
    size_t slash = out.find_last_of('/'), dot = out.find_last_of('.');
    std::string stem =
        dot != std::string::npos && (slash == std::string::npos || dot > slash) ? out.substr(0, dot) : out;
    std::string base = slash == std::string::npos ? stem : stem.substr(slash + 1);
    std::vector<std::pair<std::string, std::string>> files;
    for (const aiExportDataBlob *b = master->next; b; b = b->next)
        files.emplace_back(stem + "." + b->name.C_Str(), std::string((const char *)b->data, b->size));
    std::string text((const char *)master->data, master->size);
    if (master->next) {
        static const std::string magic = "$blobfile";
        for (size_t p = 0; (p = text.find(magic, p)) != std::string::npos; p += base.size())
            text.replace(p, magic.size(), base);
    }
    if (compact_fbx) text = CompactAsciiFbxNumbers(text);
    files.emplace_back(out, std::move(text));
    for (const auto &f : files) {
        ra_error err;
        ra_error_clear(&err);
        if (ra_write_file(f.first.c_str(), f.second.data(), f.second.size(), &err) != RA_OK) {
            error = FormatError(err);
            return false;
        }
    }
    return true;
}

// extra: more "k=v" options for this file (batch's animation=ID of an archive item)
// bytes: in's contents when the caller has them already (batch shares an
// archive's bytes between the conversions of its animations); else in is read
using Bytes = std::shared_ptr<const FileBytes>;
// retroanim's own writer: the document loaded by the C library, written
// without Assimp
bool ConvertOwn(const std::string &in, const std::string &out, const Target &t, const ra_options &opt,
                std::string &error, Converted &info, const uint8_t *data, size_t size)
{
    ra_error err;
    ra_error_clear(&err);
    ra_document *doc = nullptr;
    // the writers take the scene alone: the model's bulk arrays (the keys as
    // stored) go as the bake is done with them, not kept beside the baked
    // keys and the file being written
    ra_status ls = ra_document_read(data, size, in == "-" ? nullptr : in.c_str(), &opt, &doc, &err);
    if (ls == RA_OK) {
        doc->free_bulk_early = true;
        ls = ra_document_build_scene(doc, &err);
    }
    if (ls != RA_OK) {
        ra_document_free(doc);
        error = FormatError(err);
        info.usage = err.code == RA_ERR_USAGE;
        return false;
    }
    ra_write_stats st;
    ra_status rs;
    if (t.id == "fbx") {
        ra_fbx_options fo;
        ra_fbx_options_default(&fo);
        fo.euler_tolerance = t.euler_tolerance;
        rs = ra_fbx_write(&doc->scene, out.c_str(), &fo, &st, &err);
        info.writer = "binary FBX 7.4, retroanim's writer";
    } else {
        ra_gltf_options go;
        ra_gltf_options_default(&go);
        go.binary = t.id == "glb";
        go.khr_visibility = t.visibility;
        rs = ra_gltf_write(&doc->scene, out.c_str(), &go, &st, &err);
        info.writer = std::string(go.binary ? "glTF 2.0 binary" : "glTF 2.0 + .bin") + ", retroanim's writer";
    }
    info.meshes = doc->scene.mesh_count;
    info.textures = doc->scene.texture_count;
    ra_document_free(doc);
    if (rs != RA_OK) {
        info.output_failed = true;
        error = FormatError(err);
        return false;
    }
    info.nodes = st.nodes;
    info.animations = st.animations;
    info.cameras = st.cameras;
    info.keys = (size_t)st.keys;
    info.bytes = st.bytes;
    return true;
}

// batch: a format option applies to the files whose format declares it
bool ConvertOne(const std::string &in, const std::string &out, const Target &target, const Options &o,
                std::string &error, Converted &info, const std::string &extra = "", Bytes bytes = nullptr,
                bool batch = false)
{
    const std::string &export_id = target.id;
    ra_error err;
    ra_error_clear(&err);
    if (in != "-" && SameFile(in, out)) {
        info.output_failed = true;
        error = "is the input file; choose another output";
        return false;
    }
    if (!CheckCommonOptions(o.opt, err)) {
        error = FormatError(err);
        info.usage = true;
        return false;
    }
    if (!bytes) {
        auto v = std::make_shared<FileBytes>();
        if (!ReadBytes(in, o.opt, *v, err)) {
            error = FormatError(err);
            return false;
        }
        bytes = v;
    }
    const uint8_t *data = bytes->data();
    size_t size = bytes->size();
    const char *name = in == "-" ? nullptr : in.c_str();
    // the library's own verdict where Assimp would give its generic one
    auto library_error = [&](const ra_options &opt) {
        ra_error e;
        ra_error_clear(&e);
        ra_document *d = nullptr;
        if (ra_document_read(data, size, name, &opt, &d, &e) == RA_OK) {
            ra_document_free(d);
            return false;
        }
        error = FormatError(e);
        info.usage = e.code == RA_ERR_USAGE;
        return true;
    };
    const char *forced = ra_options_get(&o.opt, "format");
    const ra_format *f = forced ? ra_format_find(forced) : ra_format_detect(data, size, name);
    ra_options opt = f ? o.For(f, batch) : o.opt;
    std::string ek, ev; // extra: "animation=ID" of an archive item
    if (!extra.empty()) {
        ek = extra.substr(0, extra.find('='));
        ev = extra.substr(extra.find('=') + 1);
        ra_options_add(&opt, ek.c_str(), ev.c_str());
    }
    if (!f || size == 0) { // an unknown format or an empty file: the message of the library (or the forced format)
        if (!library_error(opt)) error = "not a file of any supported format";
        return false;
    }
    if (ra_options_validate(&opt, f, &err) != RA_OK) {
        error = FormatError(err);
        info.usage = true;
        return false;
    }
    if (target.own) return ConvertOwn(in, out, target, opt, error, info, data, size);
    info.writer = "Assimp's " + export_id + " exporter";
    std::string opts = o.Joined(batch ? f : nullptr);
    // Assimp's exporters and its import validation are quadratic in nodes (a
    // flat 20,000-node scene: FBX 115 s, Collada 13 s, validation 1.3 s; at
    // 40,000 four times that): through Assimp a scene may have at most
    // kAssimpMaxNodes unless max_nodes says otherwise
    bool node_cap = !ra_options_get(&opt, "max_nodes");
    if (node_cap) opts += std::string(opts.empty() ? "" : ";") + "max_nodes=" + std::to_string(kAssimpMaxNodes);
    if (!extra.empty()) opts += (opts.empty() ? "" : ";") + extra;
    if (!forced) opts += std::string(opts.empty() ? "" : ";") + "format=" + f->id;
    // the importer reads from memory; this lets it find companion files
    if (!ra_options_get(&opt, "source_path") && name) {
        std::vector<char> esc(2 * in.size() + 1);
        ra_options_escape(in.c_str(), esc.data(), esc.size());
        opts += std::string(";source_path=") + esc.data();
    }
    // every retroanim importer honours format=ID; pick one Assimp will route to
    std::string hint;
    size_t n = 0;
    const ra_format *const *all = ra_formats(&n);
    for (size_t i = 0; i < n && hint.empty(); i++)
        if (all[i]->extensions[0])
            hint = std::string(all[i]->extensions).substr(0, std::string(all[i]->extensions).find(' '));
    Assimp::Importer imp;
    retroanim::RegisterImporters(imp);
    imp.SetPropertyString(retroanim::kOptionsProperty, opts);
    const aiScene *sc = imp.ReadFileFromMemory(data, size, aiProcess_ValidateDataStructure, hint.c_str());
    if (!sc) {
        error = imp.GetErrorString();
        if (library_error(opt)) return false; // the file or an option is refused: the library says how
        if (node_cap && error.find("max_nodes (" + std::to_string(kAssimpMaxNodes) + ")") != std::string::npos)
            error += "; Assimp's exporters are quadratic in nodes: write .glb, .gltf or .fbx (retroanim's writers "
                     "take the default max_nodes), or raise the cap with --option max_nodes=N";
        return false;
    }
    info.nodes = 0;
    std::vector<const aiNode *> stack{sc->mRootNode};
    while (!stack.empty()) {
        const aiNode *nd = stack.back();
        stack.pop_back();
        info.nodes++;
        for (unsigned i = 0; i < nd->mNumChildren; i++) stack.push_back(nd->mChildren[i]);
    }
    info.animations = sc->mNumAnimations;
    info.cameras = sc->mNumCameras;
    for (unsigned a = 0; a < sc->mNumAnimations; a++)
        for (unsigned c = 0; c < sc->mAnimations[a]->mNumChannels; c++) {
            const aiNodeAnim *ch = sc->mAnimations[a]->mChannels[c];
            info.keys += ch->mNumPositionKeys + ch->mNumRotationKeys + ch->mNumScalingKeys;
        }
    if (export_id == "fbx" || export_id == "fbxa") RepeatRotationKeys(const_cast<aiScene *>(sc));
    // exported to memory, then written whole or not at all
    Assimp::Exporter ex;
    const aiExportDataBlob *blob = ex.ExportToBlob(sc, export_id.c_str());
    if (!blob) {
        info.output_failed = true;
        error = std::string("export to ") + export_id + " failed: " + ex.GetErrorString();
        return false;
    }
    if (!WriteBlobs(blob, out, export_id == "fbxa", error)) {
        info.output_failed = true;
        return false;
    }
    return true;
}

int CmdConvert(const Args &a, const Options &o)
{
    if (a.pos.size() != 2) return Usage("convert takes IN and OUT");
    std::string id = a.format.empty() ? ExportIdFor(ExtensionOf(a.pos[1])) : a.format;
    if (id.empty()) return Usage("no exporter for '" + a.pos[1] + "'; name one with --format ID");
    if (!ExportIdKnown(id)) return Usage("unknown export format '" + id + "'");
    if (!RefusedExport(id).empty()) return Usage(RefusedExport(id));
    std::string error;
    Converted info;
    Target target = TargetFor(id, a.writer);
    target.visibility = a.gltf_visibility;
    target.euler_tolerance = a.fbx_euler_tolerance;
    if (!ConvertOne(a.pos[0], a.pos[1], target, o, error, info)) {
        if (info.output_failed) {
            std::fprintf(stderr, "retroanim: %s: %s\n", a.pos[1].c_str(), error.c_str());
            return 3;
        }
        Fail(a.pos[0], error);
        return info.usage ? 2 : 1;
    }
    if (!a.quiet) {
        std::printf("wrote %s (%s): %zu nodes, %zu animation(s), %zu camera(s), %zu keys", a.pos[1].c_str(),
                    info.writer.c_str(), info.nodes, info.animations, info.cameras, info.keys);
        if (info.meshes) std::printf(", %zu mesh(es), %zu texture(s)", info.meshes, info.textures);
        if (info.bytes) std::printf(", %llu bytes", (unsigned long long)info.bytes);
        std::printf("\n");
    }
    return 0;
}

// An archive read into memory and listed.
struct Archive {
    FileBytes bytes;
    ra_archive *ar = nullptr;
    ~Archive() { ra_archive_free(ar); }
};

// 0 ok; otherwise prints the error line and returns the exit code
int OpenArchive(const std::string &file, const ra_options &opt, Archive &out, bool *wdb = nullptr)
{
    ra_error err;
    ra_error_clear(&err);
    if (!CheckCommonOptions(opt, err)) {
        Fail(file, FormatError(err));
        return 2;
    }
    if (!ReadBytes(file, opt, out.bytes, err)) return Fail(file, FormatError(err));
    // a WORLD.WDB is listed by its own reader (CmdList), not as an archive
    const ra_format *f = ra_format_detect(out.bytes.data(), out.bytes.size(), file.c_str());
    if (wdb && f && std::strcmp(ra_format_id(f), "lego_wdb") == 0 &&
        !ra_archive_detect(out.bytes.data(), out.bytes.size())) {
        *wdb = true;
        return 0;
    }
    if (ra_archive_open(out.bytes.data(), out.bytes.size(), &opt, &out.ar, &err) != RA_OK) {
        Fail(file, FormatError(err));
        return ExitFor(err.code);
    }
    return 0;
}

// A file name from an item name: no separators or control characters.
std::string SafeName(const std::string &name)
{
    std::string s;
    for (char c : name) s += (c == '/' || c == '\\' || (unsigned char)c < 32 || c == ':') ? '_' : c;
    if (s.empty() || s == "." || s == "..") s = "_" + s;
    return s;
}

// Unique file stems for the items of an archive (the name, or name_ID where two share it).
std::vector<std::string> ItemStems(const ra_archive *ar)
{
    std::map<std::string, int> seen;
    for (size_t i = 0; i < ar->count; i++) seen[SafeName(ar->items[i].name)]++;
    std::vector<std::string> out;
    for (size_t i = 0; i < ar->count; i++) {
        std::string s = SafeName(ar->items[i].name);
        out.push_back(seen[s] > 1 ? s + "_" + std::to_string(ar->items[i].id) : s);
    }
    return out;
}

std::string IdText(const ra_archive *ar, uint32_t id)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, std::strcmp(ar->format, "metroid_pak") == 0 ? "0x%08X" : "%u", id);
    return buf;
}

// A LEGO Island WORLD.WDB (not an archive of animations): its worlds,
// models, parts and textures.
int ListWdb(const std::string &file, const ra_options &opt, const FileBytes &bytes)
{
    ra_error err;
    ra_error_clear(&err);
    char *text = nullptr;
    if (lego_wdb_list(bytes.data(), bytes.size(), &opt, &text, &err) != RA_OK) {
        Fail(file, FormatError(err));
        return ExitFor(err.code);
    }
    std::printf("%s: lego_wdb, %s", file.c_str(), text);
    ra_free(text);
    return 0;
}

int CmdList(const Args &a, const Options &o)
{
    if (a.pos.size() != 1) return Usage("list takes one ARCHIVE");
    Archive arc;
    bool wdb = false;
    if (int rc = OpenArchive(a.pos[0], o.opt, arc, &wdb)) return rc;
    if (wdb) return ListWdb(a.pos[0], o.opt, arc.bytes);
    ra_archive *ar = arc.ar;
    std::printf("%s: %s, %zu animation(s)\n", a.pos[0].c_str(), ar->format, ar->count);
    std::printf("%-4s %-10s %-28s %-26s %9s %9s %-4s %9s  %s\n", "#", "id", "name", "kind", "size", "stored", "comp",
                "duration", "group");
    int failed = 0;
    // items whose TOC entries name the same stored bytes have the same
    // payload: loaded once (a crafted .big of N entries on one payload of S
    // bytes cost N loads of S)
    std::map<std::tuple<std::string, uint64_t, uint64_t, bool>, std::pair<std::string, std::string>> durations;
    for (size_t i = 0; i < ar->count; i++) {
        const ra_archive_item &it = ar->items[i];
        // the duration: the payload loaded by its own format (a Metroid one without its skeleton)
        auto key = std::make_tuple(std::string(it.format), it.offset, it.stored_size, it.compressed);
        auto known = durations.find(key);
        std::string dur = "-", error;
        if (known != durations.end()) {
            dur = known->second.first, error = known->second.second;
        } else {
            const uint8_t *p = nullptr;
            size_t n = 0;
            ra_error err;
            ra_error_clear(&err);
            ra_document *doc = nullptr;
            ra_options lo;
            ra_options_init(&lo);
            ra_options_add(&lo, "format", it.format);
            if (ra_option_find(ra_format_find(it.format), "cinf")) ra_options_add(&lo, "cinf", "none");
            if (ra_archive_payload(ar, i, &p, &n, &err) == RA_OK &&
                ra_document_load(p, n, nullptr, &lo, &doc, &err) == RA_OK) {
                if (doc->scene.animation_count) {
                    char b[32];
                    std::snprintf(b, sizeof b, "%.3f s", doc->scene.animations[0].duration);
                    dur = b;
                }
                ra_document_free(doc);
            } else {
                dur = "broken";
                error = FormatError(err);
            }
            durations[key] = {dur, error};
        }
        if (!error.empty()) {
            failed++;
            std::fprintf(stderr, "retroanim: %s: %s: %s\n", a.pos[0].c_str(), it.name, error.c_str());
        }
        std::printf("%-4zu %-10s %-28s %-26s %9llu %9llu %-4s %9s  %s\n", i, IdText(ar, it.id).c_str(), it.name,
                    it.kind, (unsigned long long)it.size, (unsigned long long)it.stored_size,
                    it.compressed ? "yes" : "no", dur.c_str(), it.group);
    }
    for (size_t i = 0; i < ar->warning_count; i++) std::printf("warning: %s\n", ar->warnings[i]);
    return failed ? 1 : 0;
}

int CmdExtract(const Args &a, const Options &o)
{
    if (a.pos.size() != 2) return Usage("extract takes ARCHIVE and OUT_DIR");
    Archive arc;
    if (int rc = OpenArchive(a.pos[0], o.opt, arc)) return rc;
    ra_archive *ar = arc.ar;
    std::error_code mk;
    std::filesystem::create_directories(a.pos[1], mk);
    if (mk) return Fail(a.pos[1], "cannot create the output folder: " + mk.message());
    std::vector<std::string> stems = ItemStems(ar);
    int failed = 0, skipped = 0; // items that could not be read; outputs not written
    for (size_t i = 0; i < ar->count; i++) {
        const ra_archive_item &it = ar->items[i];
        const uint8_t *p = nullptr;
        size_t n = 0;
        ra_error err;
        ra_error_clear(&err);
        std::string out = a.pos[1] + "/" + stems[i] + "." + it.extension;
        const char *skel_ext = ra_archive_skeleton_extension(ar, i);
        std::string skel = skel_ext ? a.pos[1] + "/" + stems[i] + "." + skel_ext : "";
        // never over the archive; over an existing file only with --force
        std::string refused;
        for (const std::string *f : {&out, &skel}) {
            if (f->empty() || !refused.empty()) continue;
            if (SameFile(*f, a.pos[0])) refused = *f + " is the archive itself; not written";
            else if (!a.force && access(f->c_str(), F_OK) == 0)
                refused = *f + " exists; not replaced (--force replaces it)";
        }
        if (!refused.empty()) {
            skipped++;
            std::fprintf(stderr, "retroanim: %s\n", refused.c_str());
            continue;
        }
        bool ok = ra_archive_payload(ar, i, &p, &n, &err) == RA_OK && ra_write_file(out.c_str(), p, n, &err) == RA_OK;
        // the skeleton (ship geometry) beside it, under its stem: the loose file finds it as a sibling
        if (ok && it.has_skeleton)
            ok = ra_archive_skeleton(ar, i, &p, &n, &err) == RA_OK && ra_write_file(skel.c_str(), p, n, &err) == RA_OK;
        if (!ok) {
            failed++;
            std::fprintf(stderr, "retroanim: %s: %s: %s\n", a.pos[0].c_str(), it.name, FormatError(err).c_str());
            continue;
        }
        if (!a.quiet) std::printf("wrote %s%s%s\n", out.c_str(), skel.empty() ? "" : " + ", skel.c_str());
    }
    for (size_t i = 0; i < ar->warning_count && !a.quiet; i++) std::printf("warning: %s\n", ar->warnings[i]);
    if (!a.quiet) std::printf("extract: %zu animation(s), %d failed, %d not written\n", ar->count, failed, skipped);
    return failed ? 1 : skipped ? 3 : 0;
}

int CmdBatch(const Args &a, const Options &given)
{
    if (a.pos.size() != 2) return Usage("batch takes IN_DIR and OUT_DIR");
    if (a.format.empty()) return Usage("batch needs --format ID");
    if (!ExportIdKnown(a.format)) return Usage("unknown export format '" + a.format + "'");
    if (!RefusedExport(a.format).empty()) return Usage(RefusedExport(a.format));
    double jd = 1;
    if (!a.jobs.empty() && (!ParseNumber(a.jobs, jd) || jd < 1 || jd > 256 || jd != (double)(int)jd))
        return Usage("-j wants a number of jobs from 1 to 256");
    // the conversions run side by side: each loads on its own thread unless
    // the option threads says otherwise
    Options o = given;
    if (jd > 1 && !ra_options_get(&given.opt, "threads")) o.Set("threads", "1");
    o.Finish();
    // each option must be one some format declares, with a value it accepts;
    // a file takes the options its own format declares
    for (size_t i = 0; i < o.keys.size(); i++) {
        ra_error err;
        ra_error_clear(&err);
        ra_options one;
        ra_options_init(&one);
        ra_options_add(&one, o.keys[i].c_str(), o.values[i].c_str());
        bool ok = false;
        std::string why;
        for (size_t f = 0; f < ra_format_count() && !ok; f++) {
            if (!ra_option_find(ra_format_at(f), o.keys[i].c_str())) continue;
            ok = ra_options_validate(&one, ra_format_at(f), &err) == RA_OK;
            if (!ok && why.empty()) why = FormatError(err);
            ra_error_clear(&err);
        }
        if (!ok)
            return Usage(why.empty() ? "unknown option '" + o.keys[i] + "' (retroanim help options lists them)" : why);
    }
    std::string ext = ExtensionForExportId(a.format);
    Target target = TargetFor(a.format, a.writer);
    target.visibility = a.gltf_visibility;
    target.euler_tolerance = a.fbx_euler_tolerance;
    DIR *d = opendir(a.pos[0].c_str());
    if (!d) return Usage("cannot open directory " + a.pos[0]);
    // each file's head is read once: it says whether the file is ours (when
    // its extension does not) and whether it is an archive
    struct Input {
        std::string name;
        const char *archive; // the archive format's id, or nullptr
        bool operator<(const Input &b) const { return name < b.name; }
    };
    std::vector<Input> files;
    const char *forced = ra_options_get(&o.opt, "format");
    size_t fn = 0;
    const ra_format *const *all = ra_formats(&fn);
    while (dirent *e = readdir(d)) {
        std::string name = e->d_name;
        if (name == "." || name == "..") continue;
        std::string path = a.pos[0] + "/" + name;
        struct stat st;
        if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
        uint8_t head[64];
        size_t n = 0;
        if (FILE *fp = std::fopen(path.c_str(), "rb")) {
            n = std::fread(head, 1, sizeof head, fp);
            std::fclose(fp);
        }
        bool ours = forced || ra_format_by_extension(name.c_str()) != nullptr;
        for (size_t i = 0; i < fn && !ours; i++) ours = all[i]->detect && all[i]->detect(head, n) >= 50;
        if (ours) files.push_back({name, forced ? nullptr : ra_archive_detect(head, n)});
    }
    closedir(d);
    std::sort(files.begin(), files.end());
    std::error_code mk;
    std::filesystem::create_directories(a.pos[1], mk); // with its parents; an existing folder is fine
    if (mk) {
        std::fprintf(stderr, "retroanim: %s: cannot create the output folder: %s\n", a.pos[1].c_str(),
                     mk.message().c_str());
        return 1;
    }
    // out names: the stem, or the whole name where two inputs share a stem
    // (a Metroid walk.anim beside its walk.cinf), so no output is written twice
    struct Job {
        std::string in, out, extra;
    };
    std::vector<Job> jobs_list;
    std::vector<std::string> errors;
    size_t archive_failures = 0;
    {
        std::map<std::string, int> stems;
        auto stem_of = [](const std::string &n) {
            std::string s = n.substr(0, n.find_last_of('.'));
            return s.empty() ? n : s;
        };
        for (const auto &f : files) stems[stem_of(f.name)]++;
        for (const auto &f : files) {
            std::string in = a.pos[0] + "/" + f.name;
            std::string base = stems[stem_of(f.name)] > 1 ? f.name : stem_of(f.name);
            // an archive: every animation in it, into a folder named after it
            if (f.archive) {
                Archive arc;
                if (OpenArchive(in, o.For(ra_format_find(f.archive), true), arc)) {
                    archive_failures++;
                    continue;
                }
                std::string dir = a.pos[1] + "/" + base;
                if (arc.ar->count) std::filesystem::create_directories(dir, mk); // none for an empty archive
                std::vector<std::string> item_stems = ItemStems(arc.ar);
                for (size_t k = 0; k < arc.ar->count; k++)
                    jobs_list.push_back({in, dir + "/" + item_stems[k] + "." + ext,
                                         "animation=" + std::to_string(arc.ar->items[k].id)});
                continue;
            }
            jobs_list.push_back({in, a.pos[1] + "/" + base + "." + ext, ""});
        }
    }
    // an output that is one of the inputs (batch DIR DIR, a LEGO file named
    // walk.glb) is skipped with a message: inputs are never written
    {
        std::set<std::pair<dev_t, ino_t>> inputs;
        struct stat st;
        for (const auto &f : files)
            if (stat((a.pos[0] + "/" + f.name).c_str(), &st) == 0) inputs.insert({st.st_dev, st.st_ino});
        std::vector<Job> kept;
        for (auto &j : jobs_list) {
            if (stat(j.out.c_str(), &st) == 0 && inputs.count({st.st_dev, st.st_ino})) {
                errors.push_back("retroanim: " + j.out + ": is one of the inputs; not written");
                std::fprintf(stderr, "%s\n", errors.back().c_str());
                archive_failures++; // counted with the conversions that did not happen
                continue;
            }
            kept.push_back(std::move(j));
        }
        jobs_list.swap(kept);
    }
    std::atomic<size_t> next{0}, done{0}, failed{archive_failures};
    std::mutex mu;
    bool tty = !a.quiet && isatty(2);
    auto start = std::chrono::steady_clock::now();
    auto progress = [&]() {
        if (!tty) return;
        size_t dn = done.load(), total = jobs_list.size();
        int width = 30, fill = total ? (int)((size_t)width * dn / total) : width;
        std::fprintf(stderr, "\r[%.*s%*s] %zu/%zu  %zu failed", fill, "##############################", width - fill,
                     "", dn, total, failed.load());
        std::fflush(stderr);
    };
    // The animations of one archive are consecutive jobs: a worker keeps the
    // archive's bytes while its jobs are from that archive, and workers on the
    // same archive share one copy (read once, not once per animation).
    std::map<std::string, std::weak_ptr<const FileBytes>> shared_bytes;
    std::mutex bytes_mu;
    auto archive_bytes = [&](const std::string &in, std::string &error) -> Bytes {
        std::lock_guard<std::mutex> lock(bytes_mu);
        if (Bytes b = shared_bytes[in].lock()) return b;
        auto v = std::make_shared<FileBytes>();
        ra_error err;
        ra_error_clear(&err);
        if (!ReadBytes(in, o.opt, *v, err)) {
            error = FormatError(err);
            return nullptr;
        }
        shared_bytes[in] = v;
        return v;
    };
    auto worker = [&]() {
        Bytes held; // the current archive's bytes
        for (;;) {
            size_t i = next++;
            if (i >= jobs_list.size()) return;
            const std::string &in = jobs_list[i].in, &out = jobs_list[i].out;
            std::string error;
            Converted info;
            bool archive = !jobs_list[i].extra.empty();
            held = archive ? archive_bytes(in, error) : nullptr;
            bool ok = (!archive || held) && ConvertOne(in, out, target, o, error, info, jobs_list[i].extra, held, true);
            std::lock_guard<std::mutex> lock(mu);
            if (!ok) {
                failed++;
                errors.push_back("retroanim: " + in +
                                 (jobs_list[i].extra.empty() ? "" : " [" + jobs_list[i].extra + "]") + ": " + error);
                if (tty) std::fputc('\n', stderr);
                std::fprintf(stderr, "%s\n", errors.back().c_str());
            }
            done++;
            progress();
        }
    };
    int jobs = (int)jd;
    std::vector<std::thread> pool;
    for (int i = 1; i < jobs; i++) pool.emplace_back(worker);
    worker();
    for (auto &t : pool) t.join();
    if (tty) std::fputc('\n', stderr);
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!a.quiet)
        std::printf("batch: %zu file(s), %zu conversion(s), %zu converted, %zu failed, %.2f s, %d job(s)\n",
                    files.size(), jobs_list.size() + archive_failures,
                    jobs_list.size() + archive_failures - failed.load(), failed.load(), secs, jobs);
    return failed.load() ? 1 : 0;
}

// SIGINT/SIGTERM: the temporary files of outputs not yet complete are removed,
// so no half-written file is left behind (finished outputs were renamed into
// place whole)
void OnSignal(int sig)
{
    ra_outfile_remove_all_temporary();
    signal(sig, SIG_DFL);
    raise(sig);
}

} // namespace

int CmdHelp(const Args &a)
{
    if (a.pos.empty()) {
        PrintOverview(stdout);
        return 0;
    }
    if (a.pos.size() != 1) return Usage("help takes at most one COMMAND");
    const std::string &what = a.pos[0];
    if (what == "options") PrintOptions(stdout);
    else if (what == "man") PrintMan(stdout);               // the man page (the build installs its output)
    else if (what == "completion") PrintCompletion(stdout); // bash completion (installed too)
    else if (const Command *c = FindCommand(what)) PrintCommandHelp(stdout, *c);
    else return Usage("no command '" + what + "' (retroanim help lists them)");
    return 0;
}

int main(int argc, char **argv)
{
    signal(SIGINT, OnSignal);
    signal(SIGTERM, OnSignal);
    if (argc < 2) return Usage("no command");
    std::string cmd = argv[1];
    if (cmd == "-h" || cmd == "--help") cmd = "help";
    if (cmd == "--version" || cmd == "-V") {
        std::printf("retroanim %s (Assimp %u.%u.%u)\n", ra_version_string(), aiGetVersionMajor(), aiGetVersionMinor(),
                    aiGetVersionPatch());
        return 0;
    }
    const Command *c = FindCommand(cmd);
    if (!c) return Usage("unknown command '" + cmd + "'");
    g_command = c->name;
    Args a;
    std::string err;
    if (!ParseArgs(argc, argv, *c, a, err)) return Usage(err);
    if (a.help) {
        PrintCommandHelp(stdout, *c);
        return 0;
    }
    if (cmd == "help") return CmdHelp(a);
    Options o;
    if (!MakeOptions(a.option_strings, o, err)) return Usage(err);
    // every option now travels in o (to Assimp in its property): the
    // importers must not read the environment's copy again
    unsetenv("RETROANIM_OPTIONS");
    if (cmd == "formats") return a.pos.empty() ? CmdFormats() : Usage("formats takes no argument");
    if (cmd == "info") return CmdInfo(a, o);
    if (cmd == "dump") return CmdDump(a, o);
    if (cmd == "pose") return CmdPose(a, o);
    if (cmd == "convert") return CmdConvert(a, o);
    if (cmd == "batch") return CmdBatch(a, o);
    if (cmd == "list") return CmdList(a, o);
    return CmdExtract(a, o);
}
