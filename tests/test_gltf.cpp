// retroanim's glTF writer, read back by Assimp's own glTF 2.0 importer: every
// fixture's .glb and .gltf hold the scene's nodes, cameras and animations, and
// every key of `dump` (value and float32 time), plus one hold key where a
// track ends before the animation; each animation lasts its duration.  Also:
// identical bytes for identical scenes, and a failed write (/dev/full, a
// missing folder) reports the output and leaves no file.
#include <assimp/Importer.hpp>
#include <assimp/scene.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "ra_fixture.h"
#include "writer_test.h"
#include "geometry_check.h"
#include "retroanim/ra_gltf.h"
#include "retroanim/ra_document.h"

static std::string g_dir;
static long g_keys, g_files;

static const aiNodeAnim *Channel(const aiAnimation *a, const char *node)
{
    for (unsigned c = 0; c < a->mNumChannels; c++)
        if (std::strcmp(a->mChannels[c]->mNodeName.C_Str(), node) == 0) return a->mChannels[c];
    return nullptr;
}

// The keys Assimp read for one track against the scene's: same count (plus a
// hold key at the duration), times as float32 seconds, values within float32.
template <typename K, typename R, typename Eq>
static void CompareTrack(const char *nm, const char *what, const R *ra, size_t n, const K *ai, unsigned m, double tps,
                         double duration, Eq eq)
{
    if (!n) return;
    bool hold = ra_f32_floor(ra[n - 1].t) < ra_f32_floor(duration) && ra[n - 1].t < duration;
    CHECK(m == n + (hold ? 1 : 0), "%s %s: %u keys read back, %zu in the scene%s", nm, what, m, n,
          hold ? " + hold" : "");
    if (m < n) return;
    double worst = 0;
    for (size_t k = 0; k < n; k++) {
        double t = ai[k].mTime / tps;
        worst = std::fmax(worst, std::fabs(t - ra_f32_floor(ra[k].t)) / std::fmax(1.0, ra[k].t));
        CHECK(eq(ra[k], ai[k].mValue), "%s %s: key %zu value differs", nm, what, k);
        g_keys++;
    }
    CHECK(worst <= 1e-6, "%s %s: key times differ by %g", nm, what, worst);
    if (hold)
        CHECK(std::fabs(ai[m - 1].mTime / tps - ra_f32_floor(duration)) <= 1e-6 * std::fmax(1.0, duration),
              "%s %s: the hold key is at %g s, the duration %g s", nm, what, ai[m - 1].mTime / tps, duration);
}

static bool Near(double a, double b) { return std::fabs(a - b) <= 2e-6 * std::fmax(1.0, std::fabs(b)); }

static void ReadBack(const ra_scene &s, const std::string &path, const char *nm)
{
    Assimp::Importer imp;
    const aiScene *sc = imp.ReadFile(path, 0);
    CHECK(sc != nullptr, "%s: Assimp cannot read %s: %s", nm, path.c_str(), imp.GetErrorString());
    if (!sc) return;
    for (size_t i = 0; i < s.node_count; i++)
        CHECK(sc->mRootNode->FindNode(s.nodes[i].name) != nullptr, "%s: node %s missing", nm, s.nodes[i].name);
    CHECK(sc->mNumCameras == s.camera_count, "%s: %u cameras read back, %zu in the scene", nm, sc->mNumCameras,
          s.camera_count);
    if (!s.mesh_count) CHECK(sc->mNumMeshes == 0, "%s: %u meshes (no placeholder mesh)", nm, sc->mNumMeshes);
    CheckGeometry(s, sc, nm, true);
    CHECK(sc->mNumAnimations == s.animation_count, "%s: %u animations, %zu in the scene", nm, sc->mNumAnimations,
          s.animation_count);
    for (size_t a = 0; a < s.animation_count && a < sc->mNumAnimations; a++) {
        const ra_animation &an = s.animations[a];
        const aiAnimation *ai = sc->mAnimations[a];
        double tps = ai->mTicksPerSecond > 0 ? ai->mTicksPerSecond : 1;
        CHECK(std::strcmp(ai->mName.C_Str(), an.name) == 0, "%s: animation %zu is %s, want %s", nm, a,
              ai->mName.C_Str(), an.name);
        CHECK(std::fabs(ai->mDuration / tps - ra_f32_floor(an.duration)) <= 1e-6 * std::fmax(1.0, an.duration),
              "%s: animation %zu lasts %g s, the game's duration %g s", nm, a, ai->mDuration / tps, an.duration);
        for (size_t c = 0; c < an.channel_count; c++) {
            const ra_channel &ch = an.channels[c];
            const aiNodeAnim *na = Channel(ai, s.nodes[ch.node].name);
            CHECK(na != nullptr, "%s: no channel for %s", nm, s.nodes[ch.node].name);
            if (!na) continue;
            auto veq = [](const ra_vec_key &k, const aiVector3D &v) {
                return Near(v.x, k.v.x) && Near(v.y, k.v.y) && Near(v.z, k.v.z);
            };
            auto qeq = [](const ra_quat_key &k, const aiQuaternion &q) {
                double d = k.q.w * q.w + k.q.x * q.x + k.q.y * q.y + k.q.z * q.z; // either sign: one rotation
                return std::fabs(std::fabs(d) - 1) <= 4e-6;
            };
            CompareTrack(nm, "position", ch.position, ch.position_count, na->mPositionKeys, na->mNumPositionKeys, tps,
                         an.duration, veq);
            CompareTrack(nm, "rotation", ch.rotation, ch.rotation_count, na->mRotationKeys, na->mNumRotationKeys, tps,
                         an.duration, qeq);
            CompareTrack(nm, "scaling", ch.scaling, ch.scaling_count, na->mScalingKeys, na->mNumScalingKeys, tps,
                         an.duration, veq);
        }
    }
}

static void CheckFile(const uint8_t *d, size_t n, const char *path, const char *nm, bool body)
{
    ra_document *doc = nullptr;
    if (fx_load_opt(d, n, path, body, nullptr, nullptr, &doc, nullptr) != RA_OK) return; // the refused fixtures
    ra_error err;
    ra_error_clear(&err);
    g_files++;
    std::string base = g_dir + "/" + nm;
    for (const char *ext : {".glb", ".gltf"}) {
        std::string out = base + ext;
        ra_write_stats st;
        ra_status rs = ra_gltf_write(&doc->scene, out.c_str(), nullptr, &st, &err);
        CHECK(rs == RA_OK, "%s: writing %s failed", nm, out.c_str());
        if (rs != RA_OK) continue;
        CHECK(st.nodes >= doc->scene.node_count && st.animations == doc->scene.animation_count &&
                  st.cameras == doc->scene.camera_count,
              "%s: write stats", nm);
        ReadBack(doc->scene, out, nm);
        // identical scenes give identical bytes (no uninitialised padding)
        std::string again = g_dir + "/again/" + nm + ext; // same name: the same .bin URI
        CHECK(ra_gltf_write(&doc->scene, again.c_str(), nullptr, nullptr, &err) == RA_OK, "%s: second write", nm);
        CHECK(Bytes(out) == Bytes(again), "%s: two writes of %s differ", nm, ext);
    }
    ra_document_free(doc);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        std::fprintf(stderr, "usage: test_gltf FIXTURE_DIR...\n");
        return 2;
    }
    g_dir = MakeWorkDir("gltf");
    if (g_dir.empty()) return 2;
    fx_for_each_fixture(argc - 1, argv + 1, CheckFile);
    CHECK(g_files >= 40 && g_keys > 10000, "only %ld fixtures, %ld keys compared", g_files, g_keys);

    // failures: the output named, nothing left behind
    if (ra_document *doc = LoadWhole(std::string(argv[1]) + "/camera.ani")) {
        CheckWriteFailures(g_dir, ".glb", [&](const char *path, ra_error *e) {
            return ra_gltf_write(&doc->scene, path, nullptr, nullptr, e);
        });
        ra_document_free(doc);
    }
    std::printf("fixtures: %ld written as .glb and .gltf and read back by Assimp; %ld keys compared\n", g_files,
                g_keys);
    RemoveWorkDir(g_dir);
    return ra_test_finish("test_gltf");
}
