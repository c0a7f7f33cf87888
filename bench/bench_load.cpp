// Load-time measurement (not a test): for each file given, the median of
// many loads through the C API (read + to_scene) and through
// Assimp::Importer::ReadFileFromMemory with our importer.
// usage: bench_load [--runs N] [--option k=v] FILE...
#include <assimp/Importer.hpp>
#include <assimp/postprocess.h>
#include <assimp/scene.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "retroanim/assimp.hpp"
#include "retroanim/ra_document.h"

using Clock = std::chrono::steady_clock;

static double Median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

int main(int argc, char **argv)
{
    int runs = 200;
    std::string opts;
    std::vector<std::string> files;
    for (int i = 1; i < argc; i++) {
        if (!std::strcmp(argv[i], "--runs") && i + 1 < argc) runs = std::atoi(argv[++i]);
        else if (!std::strcmp(argv[i], "--option") && i + 1 < argc)
            opts += std::string(opts.empty() ? "" : ";") + argv[++i];
        else files.push_back(argv[i]);
    }
    std::printf("%-28s %8s %12s %12s %8s\n", "file", "bytes", "C load (us)", "Assimp (us)", "keys");
    for (const auto &f : files) {
        std::ifstream in(f, std::ios::binary);
        std::vector<uint8_t> d((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        ra_options o;
        ra_options_init(&o);
        std::vector<char> store(opts.size() + 1);
        if (!opts.empty()) ra_options_parse_list(&o, opts.c_str(), store.data(), store.size());
        std::vector<double> tc, ta;
        size_t keys = 0;
        for (int r = 0; r < runs; r++) {
            ra_error e;
            ra_error_clear(&e);
            ra_document *doc = nullptr;
            auto t0 = Clock::now();
            if (ra_document_load(d.data(), d.size(), f.c_str(), &o, &doc, &e) != RA_OK) {
                std::fprintf(stderr, "%s: %s\n", f.c_str(), e.msg);
                return 1;
            }
            tc.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
            if (r == 0)
                for (size_t a = 0; a < doc->scene.animation_count; a++)
                    for (size_t c = 0; c < doc->scene.animations[a].channel_count; c++) {
                        const ra_channel &ch = doc->scene.animations[a].channels[c];
                        keys += ch.position_count + ch.rotation_count + ch.scaling_count;
                    }
            ra_document_free(doc);
            Assimp::Importer imp;
            retroanim::RegisterImporters(imp);
            if (!opts.empty()) imp.SetPropertyString(retroanim::kOptionsProperty, opts);
            t0 = Clock::now();
            const aiScene *s = imp.ReadFileFromMemory(d.data(), d.size(), aiProcess_ValidateDataStructure, "ani");
            ta.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
            if (!s) {
                std::fprintf(stderr, "%s: %s\n", f.c_str(), imp.GetErrorString());
                return 1;
            }
        }
        std::string base = f.substr(f.find_last_of('/') + 1);
        std::printf("%-28s %8zu %12.1f %12.1f %8zu\n", base.c_str(), d.size(), Median(tc), Median(ta), keys);
    }
    return 0;
}
