// retroanim's FBX writer, read back by Assimp's own FBX importer: every
// fixture's .fbx holds the scene's nodes (by name, under the same parents),
// its cameras (named NAME.view, looking down +X with +Y up, with the game's
// aspect, clip planes and field of view) and its animations (names, durations);
// played back as Assimp consumers play it (linear position and scale, slerp,
// first and last key held) every node's world matrix stays within 1e-4 of the
// scene's own playback (ra_scene_sample_world) at 13 times per animation.
// Also: identical bytes for identical scenes, FBX 7.5 on request, a loose
// Euler tolerance plays the same in Assimp (the keys stay on the slerp path),
// every allocation failing in turn is clean, and a failed
// write (/dev/full, a missing folder) reports the output and leaves no file.
#include <assimp/Importer.hpp>
#include <assimp/scene.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "ra_fixture.h"
#include "writer_test.h"
#include "geometry_check.h"
#include "retroanim/ra_fbx.h"
#include "retroanim/ra_gltf.h"
#include "retroanim/ra_document.h"

static std::string g_dir;
static long g_files, g_samples;
static double g_worst;

// A track sampled as Assimp consumers do: hold before the first and after
// the last key, linear (or slerp) between the two keys around t.
template <typename K, typename V, typename Mix> static V Sample(const K *k, unsigned n, double t, V rest, Mix mix)
{
    if (!n) return rest;
    if (t <= k[0].mTime) return k[0].mValue;
    if (t >= k[n - 1].mTime) return k[n - 1].mValue;
    unsigned i = 0;
    while (i + 1 < n && k[i + 1].mTime <= t) i++;
    double f = (t - k[i].mTime) / (k[i + 1].mTime - k[i].mTime);
    return mix(k[i].mValue, k[i + 1].mValue, (float)f);
}

static aiMatrix4x4 Local(const aiNode *nd, const aiAnimation *an, double ticks)
{
    const aiNodeAnim *ch = nullptr;
    for (unsigned c = 0; an && c < an->mNumChannels; c++)
        if (an->mChannels[c]->mNodeName == nd->mName) ch = an->mChannels[c];
    if (!ch) return nd->mTransformation;
    aiVector3D t, s;
    aiQuaternion r;
    nd->mTransformation.Decompose(s, r, t);
    auto lerp = [](const aiVector3D &a, const aiVector3D &b, float f) { return a + (b - a) * f; };
    auto slerp = [](const aiQuaternion &a, const aiQuaternion &b, float f) {
        aiQuaternion o;
        aiQuaternion::Interpolate(o, a, b, f);
        return o.Normalize();
    };
    t = Sample(ch->mPositionKeys, ch->mNumPositionKeys, ticks, t, lerp);
    r = Sample(ch->mRotationKeys, ch->mNumRotationKeys, ticks, r, slerp);
    s = Sample(ch->mScalingKeys, ch->mNumScalingKeys, ticks, s, lerp);
    // T * R * S (aiMatrix4x4's (scaling, rotation, position) constructor scales the rows instead)
    aiMatrix3x3 m = r.GetMatrix();
    return aiMatrix4x4(m.a1 * s.x, m.a2 * s.y, m.a3 * s.z, t.x, m.b1 * s.x, m.b2 * s.y, m.b3 * s.z, t.y, m.c1 * s.x,
                       m.c2 * s.y, m.c3 * s.z, t.z, 0, 0, 0, 1);
}

static void Worlds(const aiNode *nd, const aiMatrix4x4 &parent, const aiAnimation *an, double ticks,
                   std::map<std::string, aiMatrix4x4> &out)
{
    std::vector<std::pair<const aiNode *, aiMatrix4x4>> stack{{nd, parent}};
    while (!stack.empty()) { // iterative: the trees go 1,024 deep
        auto [n, p] = stack.back();
        stack.pop_back();
        aiMatrix4x4 w = p * Local(n, an, ticks);
        out[n->mName.C_Str()] = w; // the scene root is named as Assimp's own root above it
        for (unsigned c = 0; c < n->mNumChildren; c++) stack.push_back({n->mChildren[c], w});
    }
}

static void ReadBack(const ra_scene &s, const std::string &path, const char *nm)
{
    Assimp::Importer imp;
    const aiScene *sc = imp.ReadFile(path, 0);
    CHECK(sc != nullptr, "%s: Assimp cannot read %s: %s", nm, path.c_str(), imp.GetErrorString());
    if (!sc) return;
    for (size_t i = 0; i < s.node_count; i++) {
        const aiNode *n = i ? sc->mRootNode->FindNode(s.nodes[i].name) : nullptr;
        if (!i) // the scene's root is the first model below Assimp's own root
            for (unsigned c = 0; c < sc->mRootNode->mNumChildren; c++)
                if (std::strcmp(sc->mRootNode->mChildren[c]->mName.C_Str(), s.nodes[0].name) == 0)
                    n = sc->mRootNode->mChildren[c];
        CHECK(n != nullptr, "%s: node %s missing", nm, s.nodes[i].name);
        if (n && i)
            CHECK(n->mParent && std::strcmp(n->mParent->mName.C_Str(), s.nodes[s.nodes[i].parent].name) == 0,
                  "%s: node %s is below %s, not %s", nm, s.nodes[i].name, n->mParent ? n->mParent->mName.C_Str() : "-",
                  s.nodes[s.nodes[i].parent].name);
    }
    CHECK(sc->mNumCameras == s.camera_count, "%s: %u cameras read back, %zu in the scene", nm, sc->mNumCameras,
          s.camera_count);
    for (size_t c = 0; c < s.camera_count && c < sc->mNumCameras; c++) {
        const ra_camera &cam = s.cameras[c];
        const aiCamera *ai = sc->mCameras[c];
        std::string want = std::string(cam.name) + ".view";
        CHECK(want == ai->mName.C_Str(), "%s: camera %zu is %s, want %s", nm, c, ai->mName.C_Str(), want.c_str());
        CHECK(ai->mLookAt == aiVector3D(1, 0, 0) && ai->mUp == aiVector3D(0, 1, 0), "%s: camera %s frame", nm,
              cam.name);
        double aspect = cam.aspect > 0 ? cam.aspect : 1;
        CHECK(std::fabs(ai->mAspect - aspect) <= 1e-5 * aspect, "%s: camera %s aspect %g, want %g", nm, cam.name,
              ai->mAspect, aspect);
        CHECK(std::fabs(ai->mClipPlaneNear - cam.clip_near) <= 1e-5 * std::fmax(1.0, cam.clip_near) &&
                  std::fabs(ai->mClipPlaneFar - cam.clip_far) <= 1e-5 * std::fmax(1.0, cam.clip_far),
              "%s: camera %s clip planes", nm, cam.name);
        // Assimp 5.2.5 puts the FBX's full field of view into mHorizontalFOV (a half angle elsewhere)
        if (!cam.orthographic)
            CHECK(std::fabs(ai->mHorizontalFOV - 2 * cam.horizontal_fov) <= 1e-5 ||
                      std::fabs(ai->mHorizontalFOV - cam.horizontal_fov) <= 1e-5,
                  "%s: camera %s field of view %g, want %g (full) or %g (half)", nm, cam.name, ai->mHorizontalFOV,
                  2 * cam.horizontal_fov, cam.horizontal_fov);
    }
    if (!s.mesh_count) CHECK(sc->mNumMeshes == 0, "%s: %u meshes (no placeholder mesh)", nm, sc->mNumMeshes);
    CheckGeometry(s, sc, nm, true);
    CHECK(sc->mNumAnimations == s.animation_count, "%s: %u animations, %zu in the scene", nm, sc->mNumAnimations,
          s.animation_count);
    std::vector<ra_mat4> want(s.node_count);
    for (size_t a = 0; a < s.animation_count && a < sc->mNumAnimations; a++) {
        const ra_animation &an = s.animations[a];
        const aiAnimation *ai = sc->mAnimations[a];
        double tps = ai->mTicksPerSecond > 0 ? ai->mTicksPerSecond : 1;
        CHECK(std::strcmp(ai->mName.C_Str(), an.name) == 0, "%s: animation %zu is %s, want %s", nm, a,
              ai->mName.C_Str(), an.name);
        CHECK(std::fabs(ai->mDuration / tps - ra_f32_floor(an.duration)) <= 1e-6 * std::fmax(1.0, an.duration),
              "%s: animation %zu lasts %g s, the game's duration %g s", nm, a, ai->mDuration / tps, an.duration);
        double worst = 0;
        for (int k = 0; k <= 12; k++) {
            double t = an.duration * k / 12.0 * 0.999 + (k == 12 ? an.duration * 0.001 : 0); // ends included
            std::map<std::string, aiMatrix4x4> got;
            Worlds(sc->mRootNode, aiMatrix4x4(), ai, t * tps, got);
            ra_scene_sample_world(&s, a, t, want.data());
            for (size_t i = 0; i < s.node_count; i++) {
                auto it = got.find(s.nodes[i].name);
                if (it == got.end()) continue; // reported above
                for (unsigned r = 0; r < 4; r++)
                    for (unsigned c = 0; c < 4; c++) {
                        double w = want[i].m[r][c], d = std::fabs(it->second[r][c] - w) / std::fmax(1.0, std::fabs(w));
                        if (!(d <= worst)) worst = std::isnan(d) ? INFINITY : d;
                    }
            }
            g_samples++;
        }
        CHECK(worst <= 1e-4, "%s: animation %zu plays %g away from the scene in Assimp", nm, a, worst);
        g_worst = std::fmax(g_worst, worst);
    }
}

static void CheckFile(const uint8_t *d, size_t n, const char *path, const char *nm, bool body)
{
    ra_document *doc = nullptr;
    if (fx_load_opt(d, n, path, body, nullptr, nullptr, &doc, nullptr) != RA_OK) return; // the refused fixtures
    ra_error err;
    ra_error_clear(&err);
    g_files++;
    std::string out = g_dir + "/" + nm + ".fbx";
    ra_write_stats st;
    ra_status rs = ra_fbx_write(&doc->scene, out.c_str(), nullptr, &st, &err);
    CHECK(rs == RA_OK, "%s: writing %s failed", nm, out.c_str());
    if (rs == RA_OK) {
        struct stat sb;
        CHECK(stat(out.c_str(), &sb) == 0 && (uint64_t)sb.st_size == st.bytes, "%s: stats say %llu bytes", nm,
              (unsigned long long)st.bytes);
        CHECK(st.nodes == doc->scene.node_count + doc->scene.camera_count &&
                  st.animations == doc->scene.animation_count && st.cameras == doc->scene.camera_count,
              "%s: write stats", nm);
        ReadBack(doc->scene, out, nm);
        std::string again = g_dir + "/again/" + nm + ".fbx";
        CHECK(ra_fbx_write(&doc->scene, again.c_str(), nullptr, nullptr, &err) == RA_OK, "%s: second write", nm);
        CHECK(Bytes(out) == Bytes(again), "%s: two writes differ", nm);
        // FBX 7.5: 64-bit record headers, read back the same
        ra_fbx_options o;
        ra_fbx_options_default(&o);
        o.version = 7500;
        std::string wide = g_dir + "/again/" + nm + ".7500.fbx";
        CHECK(ra_fbx_write(&doc->scene, wide.c_str(), &o, nullptr, &err) == RA_OK, "%s: FBX 7.5 write", nm);
        std::vector<char> b = Bytes(wide);
        CHECK(b.size() > 27 && (uint8_t)b[23] == (7500 & 255) && (uint8_t)b[24] == (7500 >> 8), "%s: 7.5 header", nm);
        ReadBack(doc->scene, wide, nm);
        // a loose Euler tolerance: fewer keys, still on the slerp path, so Assimp plays it the same
        o.version = 0;
        o.euler_tolerance = 0.2;
        std::string loose = g_dir + "/again/" + nm + ".loose.fbx";
        ra_write_stats ls;
        CHECK(ra_fbx_write(&doc->scene, loose.c_str(), &o, &ls, &err) == RA_OK, "%s: loose write", nm);
        CHECK(ls.keys <= st.keys, "%s: euler_tolerance 0.2 wrote %llu keys, the default %llu", nm,
              (unsigned long long)ls.keys, (unsigned long long)st.keys);
        ReadBack(doc->scene, loose, nm);
    }
    ra_document_free(doc);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        std::fprintf(stderr, "usage: test_fbx FIXTURE_DIR...\n");
        return 2;
    }
    g_dir = MakeWorkDir("fbx");
    if (g_dir.empty()) return 2;
    fx_for_each_fixture(argc - 1, argv + 1, CheckFile);
    CHECK(g_files >= 40 && g_samples > 500, "only %ld fixtures, %ld sample times compared", g_files, g_samples);

    // failures: the output named, nothing left behind; bad options refused
    if (ra_document *doc = LoadWhole(std::string(argv[1]) + "/camera.ani")) {
        CheckWriteFailures(g_dir, ".fbx", [&](const char *path, ra_error *e) {
            return ra_fbx_write(&doc->scene, path, nullptr, nullptr, e);
        });
        ra_error err;
        // every allocation the writer makes may fail: out of memory, nothing left behind
        std::string swept = g_dir + "/swept.fbx";
        int fails = 0;
        for (uint64_t nth = 1; nth < 1000; nth++) {
            ra_heap_stats before = ra_heap_get();
            ra_error_clear(&err);
            ra_heap_fail_nth(nth);
            ra_status st = ra_fbx_write(&doc->scene, swept.c_str(), nullptr, nullptr, &err);
            ra_heap_fail_nth(0);
            ra_heap_stats after = ra_heap_get();
            CHECK(after.live_blocks == before.live_blocks, "allocation %llu failing leaks %lld block(s)",
                  (unsigned long long)nth, (long long)(after.live_blocks - before.live_blocks));
            if (st == RA_OK) break;
            fails++;
            CHECK(st == RA_ERR_NO_MEMORY && access(swept.c_str(), F_OK) != 0,
                  "allocation %llu failing: status %d, file %s", (unsigned long long)nth, (int)st,
                  access(swept.c_str(), F_OK) == 0 ? "left" : "absent");
        }
        CHECK(fails >= 3 && access(swept.c_str(), F_OK) == 0, "the sweep failed %d allocation(s), then wrote", fails);
        // a hand-made scene with a channel on a node that does not exist: refused by both writers
        ra_scene bad = doc->scene;
        std::vector<ra_animation> anims(bad.animations, bad.animations + bad.animation_count);
        std::vector<ra_channel> chans(anims[0].channels, anims[0].channels + anims[0].channel_count);
        chans[0].node = (uint32_t)bad.node_count + 5;
        anims[0].channels = chans.data();
        bad.animations = anims.data();
        std::string badp = g_dir + "/bad.fbx", badg = g_dir + "/bad.glb";
        ra_error_clear(&err);
        CHECK(ra_fbx_write(&bad, badp.c_str(), nullptr, nullptr, &err) != RA_OK && access(badp.c_str(), F_OK) != 0,
              "an FBX of a scene with a channel on node %zu was written", bad.node_count + 5);
        ra_error_clear(&err);
        CHECK(ra_gltf_write(&bad, badg.c_str(), nullptr, nullptr, &err) != RA_OK && access(badg.c_str(), F_OK) != 0,
              "a glTF of a scene with a channel on node %zu was written", bad.node_count + 5);
        ra_fbx_options o;
        ra_fbx_options_default(&o);
        o.version = 7300;
        ra_error_clear(&err);
        CHECK(ra_fbx_write(&doc->scene, (g_dir + "/v.fbx").c_str(), &o, nullptr, &err) == RA_ERR_USAGE &&
                  access((g_dir + "/v.fbx").c_str(), F_OK) != 0,
              "version 7300 is refused and nothing is written");
        ra_document_free(doc);
    }
    std::printf(
        "fixtures: %ld written as FBX 7.4 and 7.5 and read back by Assimp; %ld sample times, worst world-matrix "
        "difference %.3g (tolerance 1e-4)\n",
        g_files, g_samples, g_worst);
    RemoveWorkDir(g_dir);
    return ra_test_finish("test_fbx");
}
