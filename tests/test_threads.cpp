// Concurrent imports: 4 threads, each with its own Assimp::Importer holding
// retroanim's importers, read every fixture from memory 3 times (the C API
// directly as well), at the same time, and must get the same scene as one
// import on the main thread (node, animation and key counts); in the second
// round each load also bakes on 3 threads of its own (option threads).  Built and run
// under ThreadSanitizer by scripts/test.sh (RETROANIM_TSAN); in the other
// builds it checks the same results without the race detector.
#include <assimp/Importer.hpp>
#include <assimp/postprocess.h>
#include <assimp/scene.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

extern "C" {
#include "ra_test.h"
#include "retroanim/ra_document.h"
}
#include "retroanim/assimp.hpp"

namespace {

struct Fixture {
    std::string path, name;
    std::vector<uint8_t> bytes;
    bool body = false;
    std::string expect; // summary from the main thread ("" = refused)
};

// cinf=none where the format declares it (options are checked strictly: a
// format that does not declare a key refuses the load); `threads` bakes on
// several threads (round 2), whose scene must be the same
bool TakesCinf(const Fixture &f)
{
    const ra_format *fmt = ra_format_by_extension(f.name.c_str());
    return !f.body && fmt && ra_option_find(fmt, "cinf");
}
std::string Options(const Fixture &f, const char *threads = nullptr)
{
    std::string o = TakesCinf(f) ? "cinf=none" : "";
    if (f.body) o += std::string(o.empty() ? "" : ";") + "format=lego_ani_body";
    if (threads) o += std::string(o.empty() ? "" : ";") + "threads=" + threads;
    return o;
}

std::string Summary(const aiScene *s)
{
    if (!s) return "";
    size_t keys = 0;
    for (unsigned a = 0; a < s->mNumAnimations; a++)
        for (unsigned c = 0; c < s->mAnimations[a]->mNumChannels; c++) {
            const aiNodeAnim *ch = s->mAnimations[a]->mChannels[c];
            keys += ch->mNumPositionKeys + ch->mNumRotationKeys + ch->mNumScalingKeys;
        }
    return std::to_string(s->mNumAnimations) + " animations, " + std::to_string(keys) + " keys, " +
           std::to_string(s->mNumCameras) + " cameras";
}

std::string ImportOnce(Assimp::Importer &imp, const Fixture &f, const char *threads = nullptr)
{
    imp.SetPropertyString(retroanim::kOptionsProperty, Options(f, threads));
    std::string hint = f.name.substr(f.name.find('.') + 1);
    const aiScene *s =
        imp.ReadFileFromMemory(f.bytes.data(), f.bytes.size(), aiProcess_ValidateDataStructure, hint.c_str());
    std::string out = Summary(s);
    imp.FreeScene();
    return out;
}

// The C API's options for f: those of Options, and threads when given
void COptions(const Fixture &f, ra_options *o, const char *threads = nullptr)
{
    ra_options_init(o);
    if (TakesCinf(f)) ra_options_add(o, "cinf", "none");
    if (threads) ra_options_add(o, "threads", threads);
    if (f.body) ra_options_add(o, "format", "lego_ani_body");
}

size_t LoadC(const Fixture &f, const char *threads = nullptr)
{
    ra_options o;
    COptions(f, &o, threads);
    ra_error e;
    ra_error_clear(&e);
    ra_document *doc = nullptr;
    size_t nodes = 0;
    if (ra_document_load(f.bytes.data(), f.bytes.size(), f.path.c_str(), &o, &doc, &e) == RA_OK)
        nodes = doc->scene.node_count;
    ra_document_free(doc);
    return nodes;
}

// The importer leaves the automatic density keys out of the ra_scene and
// inserts them while it copies the keys into the aiScene
// (ConvertSettings::max_key_angle); ConvertScene of a scene loaded by
// ra_document_load, which holds them already, must give the same keys, bit
// for bit.  Returns the keys compared (0 when either refuses the fixture:
// Assimp does not import a body-only LEGO file from memory by its hint).
size_t SameAsLoadedScene(const Fixture &f, long *differ)
{
    Assimp::Importer imp;
    retroanim::RegisterImporters(imp);
    imp.SetPropertyString(retroanim::kOptionsProperty, Options(f));
    std::string hint = f.name.substr(f.name.find('.') + 1);
    const aiScene *a = imp.ReadFileFromMemory(f.bytes.data(), f.bytes.size(), 0, hint.c_str());
    ra_options o;
    COptions(f, &o);
    ra_error e;
    ra_error_clear(&e);
    ra_document *doc = nullptr;
    // by its bare name, as the import from memory: no companion file (a
    // Metroid model beside the ANIM) is found by either
    bool loaded = ra_document_load(f.bytes.data(), f.bytes.size(), f.name.c_str(), &o, &doc, &e) == RA_OK;
    size_t keys = 0;
    if (a && loaded) {
        aiScene b;
        retroanim::ConvertScene(doc->scene, retroanim::ConvertSettings(), &b);
        bool same = a->mNumAnimations == b.mNumAnimations;
        for (unsigned i = 0; same && i < a->mNumAnimations; i++) {
            const aiAnimation *x = a->mAnimations[i], *y = b.mAnimations[i];
            same = x->mNumChannels == y->mNumChannels;
            for (unsigned c = 0; same && c < x->mNumChannels; c++) {
                const aiNodeAnim *p = x->mChannels[c], *q = y->mChannels[c];
                // (only rotations, and only where the channel has some: Assimp's
                // preprocessing gives a track without keys one from its node)
                if (!q->mNumRotationKeys) continue;
                same = p->mNumRotationKeys == q->mNumRotationKeys;
                for (unsigned k = 0; same && k < p->mNumRotationKeys; k++, keys++) {
                    const aiQuatKey &u = p->mRotationKeys[k], &v = q->mRotationKeys[k];
                    same = u.mTime == v.mTime && u.mValue.w == v.mValue.w && u.mValue.x == v.mValue.x &&
                           u.mValue.y == v.mValue.y && u.mValue.z == v.mValue.z;
                }
            }
        }
        if (!same && (*differ)++ < 5)
            std::fprintf(stderr, "%s: importer keys differ from the loaded scene's\n", f.name.c_str());
    }
    ra_document_free(doc);
    return keys;
}

// Rotation keys of every channel, in order (time and the four floats)
std::vector<float> RotationKeys(const aiScene &s)
{
    std::vector<float> v;
    for (unsigned a = 0; a < s.mNumAnimations; a++)
        for (unsigned c = 0; c < s.mAnimations[a]->mNumChannels; c++) {
            const aiNodeAnim *ch = s.mAnimations[a]->mChannels[c];
            for (unsigned k = 0; k < ch->mNumRotationKeys; k++) {
                const aiQuatKey &q = ch->mRotationKeys[k];
                v.insert(v.end(), {(float)q.mTime, q.mValue.w, q.mValue.x, q.mValue.y, q.mValue.z});
            }
        }
    return v;
}

// The counts the load hands over for the deferred cut
// (ConvertSettings::cut_added, as the importer passes ra_document's
// key_cut_added): ConvertScene with them gives the keys it gives counting
// them itself, bit for bit; with one channel's count one more, or one less
// (where that leaves a cut), it throws instead of writing past the array or
// leaving keys unwritten.  Returns the channels whose counts were spoiled.
size_t CutCountsHandedOver(const Fixture &f, long *wrong)
{
    ra_options o;
    COptions(f, &o);
    ra_error e;
    ra_error_clear(&e);
    ra_document *doc = nullptr;
    size_t spoiled = 0;
    if (ra_document_read(f.bytes.data(), f.bytes.size(), f.name.c_str(), &o, &doc, &e) == RA_OK) {
        doc->defer_key_cut = true;
        if (ra_document_build_scene(doc, &e) == RA_OK && doc->key_cut_angle > 0) {
            size_t nch = 0;
            for (size_t a = 0; a < doc->scene.animation_count; a++) nch += doc->scene.animations[a].channel_count;
            if (nch && !doc->key_cut_added && (*wrong)++ < 5)
                std::fprintf(stderr, "%s: no cut counts handed over\n", f.name.c_str());
            retroanim::ConvertSettings cs;
            cs.max_key_angle = doc->key_cut_angle;
            aiScene counted, given;
            retroanim::ConvertScene(doc->scene, cs, &counted);
            cs.cut_added = doc->key_cut_added;
            retroanim::ConvertScene(doc->scene, cs, &given);
            if (RotationKeys(counted) != RotationKeys(given) && (*wrong)++ < 5)
                std::fprintf(stderr, "%s: keys with the handed-over counts differ\n", f.name.c_str());
            std::vector<size_t> bad(doc->key_cut_added, doc->key_cut_added + (doc->key_cut_added ? nch : 0));
            for (size_t i = 0; i < bad.size(); i++) {
                if (!bad[i]) continue;
                for (int d : {1, -1}) {
                    if (d < 0 && bad[i] < 2) continue;
                    bad[i] += (size_t)d;
                    cs.cut_added = bad.data();
                    bool threw = false;
                    try {
                        aiScene x;
                        retroanim::ConvertScene(doc->scene, cs, &x);
                    } catch (const std::runtime_error &) {
                        threw = true;
                    }
                    if (!threw && (*wrong)++ < 5)
                        std::fprintf(stderr, "%s: channel %zu's cut count %+d was taken\n", f.name.c_str(), i, d);
                    bad[i] -= (size_t)d;
                    spoiled++;
                }
                break; /* the first channel with a cut */
            }
        }
    }
    ra_document_free(doc);
    return spoiled;
}

std::vector<Fixture> g_fx;
void Collect(const uint8_t *d, size_t n, const char *path, const char *name, bool body)
{
    Fixture f;
    f.path = path;
    f.name = name;
    f.bytes.assign(d, d + n);
    f.body = body;
    g_fx.push_back(f);
}

} // namespace

int main(int argc, char **argv)
{
    if (argc < 2) {
        std::fprintf(stderr, "usage: test_threads FIXTURE_DIR...\n");
        return 2;
    }
    for (int a = 1; a < argc; a++) {
        std::vector<std::string> names;
        for (const auto &entry : std::filesystem::directory_iterator(argv[a]))
            if (entry.is_regular_file()) names.push_back(entry.path().filename().string());
        std::sort(names.begin(), names.end());
        for (const std::string &name : names) {
            bool body = name.size() > 4 && name.compare(name.size() - 4, 4, ".anb") == 0;
            if (!body && (name.find('.') == std::string::npos || !ra_format_by_extension(name.c_str()))) continue;
            std::string path = std::string(argv[a]) + "/" + name;
            uint8_t *d;
            size_t n;
            ra_error e;
            ra_error_clear(&e);
            if (ra_read_file(path.c_str(), &d, &n, &e) != RA_OK) continue;
            Collect(d, n, path.c_str(), name.c_str(), body);
            ra_free(d);
        }
    }
    CHECK(g_fx.size() >= 40, "fixtures found: %zu", g_fx.size());
    std::vector<size_t> c_nodes(g_fx.size());
    {
        Assimp::Importer imp;
        retroanim::RegisterImporters(imp);
        for (size_t i = 0; i < g_fx.size(); i++) {
            g_fx[i].expect = ImportOnce(imp, g_fx[i]);
            c_nodes[i] = LoadC(g_fx[i]);
        }
    }
    size_t loaded = 0, cut_keys = 0;
    long cut_differ = 0;
    for (const Fixture &f : g_fx) {
        loaded += !f.expect.empty();
        cut_keys += SameAsLoadedScene(f, &cut_differ);
    }
    CHECK(cut_differ == 0 && cut_keys > 10000,
          "importer's density keys against the loaded scene's: %ld fixtures differ (%zu rotation keys compared)",
          cut_differ, cut_keys);
    std::printf("importer's density keys: %zu rotation keys equal to the loaded scene's\n", cut_keys);
    size_t spoiled = 0;
    long wrong = 0;
    for (const Fixture &f : g_fx) spoiled += CutCountsHandedOver(f, &wrong);
    CHECK(wrong == 0 && spoiled >= 10, "cut counts handed over: %ld wrong results (%zu spoiled counts tried)", wrong,
          spoiled);
    std::printf("cut counts handed over: same keys; %zu spoiled counts refused\n", spoiled);
    CHECK(loaded >= 40, "fixtures imported on the main thread: %zu of %zu", loaded, g_fx.size());
    const int kThreads = 4, kRounds = 3;
    std::atomic<long> imports{0}, mismatches{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; t++)
        threads.emplace_back([&, t] {
            Assimp::Importer imp;
            retroanim::RegisterImporters(imp);
            for (int r = 0; r < kRounds; r++)
                for (size_t k = 0; k < g_fx.size(); k++) {
                    size_t i = (k + (size_t)t * 7) % g_fx.size(); // the threads start at different files
                    const char *bake_threads = r == 1 ? "3" : nullptr;
                    if (ImportOnce(imp, g_fx[i], bake_threads) != g_fx[i].expect ||
                        LoadC(g_fx[i], bake_threads) != c_nodes[i]) {
                        if (mismatches++ < 5) std::fprintf(stderr, "thread %d: %s differs\n", t, g_fx[i].name.c_str());
                    }
                    imports++;
                }
        });
    for (auto &th : threads) th.join();
    CHECK(mismatches == 0, "%ld concurrent imports differ from the single-threaded one", mismatches.load());
    CHECK(imports == long(kThreads) * kRounds * long(g_fx.size()), "imports done: %ld", imports.load());
    std::printf("%d threads x %d rounds x %zu fixtures (%zu import): %ld imports (Assimp and C; round 2 baking on 3 "
                "threads each), %ld differ\n",
                kThreads, kRounds, g_fx.size(), loaded, imports.load(), mismatches.load());
    return ra_test_finish("test_threads");
}
