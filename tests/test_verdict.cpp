// One verdict per file: a mutated fixture that the C library loads, Assimp
// loads too (retroanim's importer, Assimp's validation and the post-processing
// preset of `assimp info`), and one the library refuses, Assimp refuses.
// Mutations: up to WINDOWS 4-byte windows per fixture (spread evenly), each set
// to a finite but absurd float (+-2.55e38, little- and big-endian), to
// 0xFFFFFFFF and to NaN.
#include <assimp/Importer.hpp>
#include <assimp/postprocess.h>
#include <assimp/scene.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "ra_fixture.h"
#include "retroanim/assimp.hpp"
#include "retroanim/ra_document.h"

static long g_loads, g_accepted;

static bool CLoads(const std::vector<uint8_t> &d, const std::string &path, bool body)
{
    ra_document *doc = nullptr;
    bool ok = fx_load_opt(d.data(), d.size(), path.c_str(), body, nullptr, nullptr, &doc, nullptr) == RA_OK;
    ra_document_free(doc);
    return ok;
}

static bool AssimpLoads(const std::vector<uint8_t> &d, const std::string &path, bool body, std::string &why)
{
    Assimp::Importer imp;
    retroanim::RegisterImporters(imp);
    std::string opts = "source_path=" + path;
    if (body) opts += ";format=lego_ani_body";
    imp.SetPropertyString(retroanim::kOptionsProperty, opts);
    // a LEGO body has no extension of its own: routed as the CLI does, by a hint the importers claim
    std::string ext = body ? "ani" : path.substr(path.find_last_of('.') + 1);
    const aiScene *sc = imp.ReadFileFromMemory(
        d.data(), d.size(), aiProcessPreset_TargetRealtime_MaxQuality | aiProcess_ValidateDataStructure, ext.c_str());
    if (!sc) why = imp.GetErrorString();
    return sc != nullptr;
}

static size_t g_windows;

static void CheckFile(const uint8_t *data, size_t size, const char *path_c, const char *nm, bool body)
{
    static const uint32_t patterns[] = {0x7F3FD7A2u, 0xFF3FD7A2u, 0xA2D73F7Fu, 0xFFFFFFFFu, 0x7FC00000u};
    const std::vector<uint8_t> orig(data, data + size);
    const std::string path = path_c;
    size_t slots = orig.size() / 4, step = slots > g_windows ? slots / g_windows : 1;
    long mismatches = 0;
    for (size_t w = 0; w < slots; w += step) {
        for (uint32_t p : patterns) {
            std::vector<uint8_t> d = orig;
            std::memcpy(&d[4 * w], &p, 4);
            std::string why;
            bool c = CLoads(d, path, body), s = AssimpLoads(d, path, body, why);
            g_loads++;
            g_accepted += c;
            if (c != s && mismatches++ < 3)
                CHECK(false, "%s with bytes %zu..%zu = 0x%08X: the library %s it, Assimp %s it%s%s", nm, 4 * w,
                      4 * w + 3, p, c ? "loads" : "refuses", s ? "loads" : "refuses", why.empty() ? "" : ": ",
                      why.c_str());
            else if (c == s) ra_t_pass++;
        }
    }
    if (mismatches > 3) CHECK(false, "%s: %ld mismatches in all", nm, mismatches);
}

int main(int argc, char **argv)
{
    const char *env = std::getenv("RA_VERDICT_WINDOWS");
    g_windows = env ? (size_t)std::strtoul(env, nullptr, 10) : 48;
    fx_for_each_fixture(argc - 1, argv + 1, CheckFile);
    std::printf("verdict: %ld mutated loads, %ld accepted by both\n", g_loads, g_accepted);
    CHECK(g_loads > 1000, "only %ld loads", g_loads);
    return ra_test_finish("test_verdict");
}
