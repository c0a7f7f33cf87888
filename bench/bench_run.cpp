// Load-time and memory measurement (not a test).  For one source file and
// the .glb that `retroanim convert` made of it:
//
//   read      ra_document_read (the format model only)     median of RUNS
//   load      ra_document_load (model + to_scene + checks)  median of RUNS
//   ours      Assimp::Importer::ReadFile(FILE) through retroanim's importer
//   glb       Assimp::Importer::ReadFile(GLB) through Assimp's glTF 2 importer
//   peak      the heap's high-water mark during one ReadFile, above what was
//             live before it (every malloc of the process is counted: this
//             binary replaces malloc and friends)
//   scene     bytes of the aiScene that ReadFile returned (nodes, channels,
//             keys, names, meshes, metadata), by walking it
//
// Each ReadFile runs in a child process forked before anything large is
// allocated (a fresh heap, as a program that imports one file has); the
// runs alternate ours/glb so that both see the same machine state.
// usage: bench_run [--runs N] [--option k=v] FILE GLB
// Prints one line of key=value pairs.
#include <assimp/Importer.hpp>
#include <assimp/scene.h>

#include <malloc.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "retroanim/assimp.hpp"
#include "retroanim/ra_document.h"

// ---- a counting heap: glibc's allocator underneath ---------------------------------
extern "C" {
void *__libc_malloc(size_t);
void *__libc_calloc(size_t, size_t);
void *__libc_realloc(void *, size_t);
void __libc_free(void *);
void *__libc_memalign(size_t, size_t);
}

static std::atomic<long long> g_live{0}, g_peak{0};

static void count_in(void *p)
{
    if (!p) return;
    long long now = g_live += (long long)malloc_usable_size(p);
    long long pk = g_peak.load();
    while (now > pk && !g_peak.compare_exchange_weak(pk, now)) {
    }
}
static void count_out(void *p)
{
    if (p) g_live -= (long long)malloc_usable_size(p);
}

extern "C" {
void *malloc(size_t n)
{
    void *p = __libc_malloc(n);
    count_in(p);
    return p;
}
void *calloc(size_t n, size_t s)
{
    void *p = __libc_calloc(n, s);
    count_in(p);
    return p;
}
void *realloc(void *old, size_t n)
{
    size_t was = old ? malloc_usable_size(old) : 0;
    void *p = __libc_realloc(old, n);
    if (p || !n) { // moved, grown or freed; on failure the old block stays live
        g_live -= (long long)was;
        count_in(p);
    }
    return p;
}
void free(void *p)
{
    count_out(p);
    __libc_free(p);
}
void *memalign(size_t a, size_t n)
{
    void *p = __libc_memalign(a, n);
    count_in(p);
    return p;
}
void *aligned_alloc(size_t a, size_t n) { return memalign(a, n); }
int posix_memalign(void **out, size_t a, size_t n)
{
    void *p = memalign(a, n);
    if (!p) return 12; // ENOMEM
    *out = p;
    return 0;
}
}

// ---- measurements ------------------------------------------------------------------
using Clock = std::chrono::steady_clock;

static double Median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static double Ms(Clock::time_point a, Clock::time_point b)
{
    return std::chrono::duration<double, std::milli>(b - a).count();
}

static size_t MetaBytes(const aiMetadata *m)
{
    if (!m) return 0;
    size_t n = sizeof *m + m->mNumProperties * (sizeof(aiString) + sizeof(aiMetadataEntry));
    for (unsigned i = 0; i < m->mNumProperties; i++) {
        switch (m->mValues[i].mType) {
        case AI_AISTRING: n += sizeof(aiString); break;
        case AI_AIMETADATA: n += MetaBytes(static_cast<const aiMetadata *>(m->mValues[i].mData)); break;
        default: n += 8; break;
        }
    }
    return n;
}

static size_t NodeBytes(const aiNode *n)
{
    size_t b =
        sizeof *n + n->mNumChildren * sizeof(aiNode *) + n->mNumMeshes * sizeof(unsigned) + MetaBytes(n->mMetaData);
    for (unsigned i = 0; i < n->mNumChildren; i++) b += NodeBytes(n->mChildren[i]);
    return b;
}

// What the scene holds, counted by the size of each structure and array.
static size_t SceneBytes(const aiScene *s, size_t *keys)
{
    size_t b = sizeof *s + NodeBytes(s->mRootNode) + MetaBytes(s->mMetaData);
    *keys = 0;
    for (unsigned a = 0; a < s->mNumAnimations; a++) {
        const aiAnimation *an = s->mAnimations[a];
        b += sizeof *an + sizeof(void *) + an->mNumChannels * sizeof(void *);
        for (unsigned c = 0; c < an->mNumChannels; c++) {
            const aiNodeAnim *ch = an->mChannels[c];
            b += sizeof *ch + ch->mNumPositionKeys * sizeof(aiVectorKey) + ch->mNumRotationKeys * sizeof(aiQuatKey) +
                 ch->mNumScalingKeys * sizeof(aiVectorKey);
            *keys += ch->mNumPositionKeys + ch->mNumRotationKeys + ch->mNumScalingKeys;
        }
    }
    for (unsigned m = 0; m < s->mNumMeshes; m++) {
        const aiMesh *me = s->mMeshes[m];
        b += sizeof *me + sizeof(void *) + me->mNumVertices * sizeof(aiVector3D) * (me->mNormals ? 2 : 1) +
             me->mNumFaces * (sizeof(aiFace) + 3 * sizeof(unsigned)) +
             me->mNumBones * (sizeof(aiBone) + sizeof(void *));
        for (unsigned k = 0; k < me->mNumBones; k++) b += me->mBones[k]->mNumWeights * sizeof(aiVertexWeight);
    }
    b += s->mNumCameras * (sizeof(aiCamera) + sizeof(void *)) + s->mNumMaterials * (sizeof(void *) + 256);
    return b;
}

struct ImportResult {
    double ms = 0;
    long long peak = 0;
    size_t scene = 0, keys = 0;
};

static bool Import(const std::string &path, const std::string &opts, ImportResult *r)
{
    Assimp::Importer imp;
    retroanim::RegisterImporters(imp);
    if (!opts.empty()) imp.SetPropertyString(retroanim::kOptionsProperty, opts);
    long long before = g_live.load();
    g_peak = before;
    auto t0 = Clock::now();
    const aiScene *s = imp.ReadFile(path, 0);
    r->ms = Ms(t0, Clock::now());
    r->peak = g_peak.load() - before;
    if (!s) {
        std::fprintf(stderr, "bench_run: %s: %s\n", path.c_str(), imp.GetErrorString());
        return false;
    }
    r->scene = SceneBytes(s, &r->keys);
    return true;
}

// One Import in a child process forked from this small one, so that each
// ReadFile starts from a fresh heap: imports in one process change each
// other's times (the heap a previous import grew and freed, glibc's raised
// mmap and trim thresholds, huge pages: measured, a .glb import took half
// the time after retroanim's import than on its own).
static bool ImportIsolated(const std::string &path, const std::string &opts, ImportResult *r)
{
    int fd[2];
    if (pipe(fd) != 0) return false;
    std::fflush(stdout);
    std::fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) return false;
    if (pid == 0) {
        close(fd[0]);
        ImportResult x;
        char ok = Import(path, opts, &x) ? 1 : 0;
        bool sent = write(fd[1], &ok, 1) == 1 && write(fd[1], &x, sizeof x) == (ssize_t)sizeof x;
        _exit(sent ? 0 : 1);
    }
    close(fd[1]);
    char ok = 0;
    ImportResult x;
    bool got = read(fd[0], &ok, 1) == 1 && read(fd[0], &x, sizeof x) == (ssize_t)sizeof x;
    close(fd[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (!got || !ok) return false;
    *r = x;
    return true;
}

int main(int argc, char **argv)
{
    int runs = 5;
    std::string opts;
    std::vector<std::string> files;
    for (int i = 1; i < argc; i++) {
        if (!std::strcmp(argv[i], "--runs") && i + 1 < argc) runs = std::atoi(argv[++i]);
        else if (!std::strcmp(argv[i], "--option") && i + 1 < argc)
            opts += std::string(opts.empty() ? "" : ";") + argv[++i];
        else files.push_back(argv[i]);
    }
    if (files.size() != 2 || runs < 1) {
        std::fprintf(stderr, "usage: bench_run [--runs N] [--option k=v] FILE GLB|-\n");
        return 2;
    }
    const std::string &file = files[0], &glb = files[1];
    const bool with_glb = glb != "-"; /* "-": no .glb to compare with (its export did not finish) */
    uint8_t *data = nullptr;
    size_t size = 0;
    ra_error e;
    ra_error_clear(&e);
    if (ra_read_file(file.c_str(), &data, &size, &e) != RA_OK) {
        std::fprintf(stderr, "bench_run: %s: %s\n", file.c_str(), e.msg);
        return 1;
    }
    ra_options o;
    ra_options_init(&o);
    std::vector<char> store(opts.size() + 1);
    if (!opts.empty() && !ra_options_parse_list(&o, opts.c_str(), store.data(), store.size())) {
        std::fprintf(stderr, "bench_run: malformed options\n");
        return 2;
    }

    std::vector<double> tread, tload, tours, tglb;
    size_t scene_keys = 0;
    ImportResult ours, theirs;
    long long peak_ours = 0, peak_glb = 0;
    // the imports first, each in a fresh child of this still small process,
    // alternating ours and the .glb
    for (int r = 0; r < runs; r++) {
        if (!ImportIsolated(file, opts, &ours) || (with_glb && !ImportIsolated(glb, "", &theirs))) return 1;
        tours.push_back(ours.ms);
        tglb.push_back(with_glb ? theirs.ms : NAN);
        peak_ours = std::max(peak_ours, ours.peak);
        peak_glb = std::max(peak_glb, theirs.peak);
    }
    for (int r = 0; r < runs; r++) {
        ra_document *doc = nullptr;
        auto t0 = Clock::now();
        if (ra_document_read(data, size, file.c_str(), &o, &doc, &e) != RA_OK) {
            std::fprintf(stderr, "bench_run: %s: %s\n", file.c_str(), e.msg);
            return 1;
        }
        tread.push_back(Ms(t0, Clock::now()));
        ra_document_free(doc);
        t0 = Clock::now();
        if (ra_document_load(data, size, file.c_str(), &o, &doc, &e) != RA_OK) {
            std::fprintf(stderr, "bench_run: %s: %s\n", file.c_str(), e.msg);
            return 1;
        }
        tload.push_back(Ms(t0, Clock::now()));
        scene_keys = 0;
        for (size_t a = 0; a < doc->scene.animation_count; a++)
            for (size_t c = 0; c < doc->scene.animations[a].channel_count; c++) {
                const ra_channel &ch = doc->scene.animations[a].channels[c];
                scene_keys += ch.position_count + ch.rotation_count + ch.scaling_count;
            }
        ra_document_free(doc);
    }
    std::free(data);
    double read = Median(tread), load = Median(tload), mo = Median(tours), mg = Median(tglb);
    std::printf("bytes=%zu keys=%zu read_ms=%.3f read_mbs=%.1f load_keys_per_s=%.4g to_scene_ms=%.3f load_ms=%.3f "
                "ours_ms=%.3f glb_ms=%.3f ratio=%.3f peak_ours=%lld scene_ours=%zu peak_ratio=%.3f keys_ours=%zu "
                "peak_glb=%lld scene_glb=%zu keys_glb=%zu runs=%d\n",
                size, scene_keys, read, size / 1e6 / (read / 1e3), scene_keys / (load / 1e3), load - read, load, mo, mg,
                mo / mg, peak_ours, ours.scene, (double)peak_ours / (double)ours.scene, ours.keys, peak_glb,
                theirs.scene, theirs.keys, runs);
    return 0;
}
