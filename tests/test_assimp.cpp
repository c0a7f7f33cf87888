// The Assimp side: every fixture (LEGO Island, Metroid Prime) imports through Assimp::Importer with
// aiProcess_ValidateDataStructure; its keys, played back as Assimp consumers
// play them (linear position/scale, aiQuaternion::Interpolate), agree with the
// reference evaluator at every millisecond within 1e-4; options and
// properties work; a glb export re-imports with the same names and keys;
// broken files fail with the error line; every prefix of every fixture either
// imports or fails cleanly through the shim.
#include <assimp/Exporter.hpp>
#include <assimp/Importer.hpp>
#include <assimp/config.h>
#include <assimp/postprocess.h>
#include <assimp/scene.h>

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "retroanim/assimp.hpp"
#include "retroanim/lego_ani.h"
#include "retroanim/ra_document.h"

static int g_pass, g_fail;
#define CHECK(cond, ...)                                                                                               \
    do {                                                                                                               \
        if (cond) g_pass++;                                                                                            \
        else {                                                                                                         \
            g_fail++;                                                                                                  \
            std::fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                                       \
            std::fprintf(stderr, __VA_ARGS__);                                                                         \
            std::fputc('\n', stderr);                                                                                  \
        }                                                                                                              \
    } while (0)
#include "geometry_check.h" // after CHECK

static std::vector<uint8_t> ReadAll(const std::string &p)
{
    std::ifstream f(p, std::ios::binary);
    return std::vector<uint8_t>((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

static bool IsBody(const std::string &name) { return name.size() > 4 && name.substr(name.size() - 4) == ".anb"; }

static const aiScene *Import(Assimp::Importer &imp, const std::string &path, const std::string &opts, unsigned flags)
{
    retroanim::RegisterImporters(imp);
    std::string o = opts;
    if (IsBody(path)) o += std::string(o.empty() ? "" : ";") + "format=lego_ani_body";
    if (!o.empty()) imp.SetPropertyString(retroanim::kOptionsProperty, o);
    if (IsBody(path)) {
        std::vector<uint8_t> d = ReadAll(path);
        return imp.ReadFileFromMemory(d.data(), d.size(), flags, "ani");
    }
    return imp.ReadFile(path, flags);
}

// Assimp-consumer playback of one node's channel at time t (ticks)
static aiMatrix4x4 SampleLocal(const aiNode *node, const aiAnimation *anim, double ticks)
{
    const aiNodeAnim *ch = nullptr;
    for (unsigned i = 0; anim && i < anim->mNumChannels; i++)
        if (anim->mChannels[i]->mNodeName == node->mName) ch = anim->mChannels[i];
    if (!ch) return node->mTransformation;
    aiVector3D T, S;
    aiQuaternion R;
    node->mTransformation.Decompose(S, R, T);
    auto vec = [&](const aiVectorKey *k, unsigned n, aiVector3D def) {
        if (!n) return def;
        if (ticks <= k[0].mTime) return k[0].mValue;
        if (ticks >= k[n - 1].mTime) return k[n - 1].mValue;
        unsigned i = 0;
        while (i + 1 < n && k[i + 1].mTime <= ticks) i++;
        double f = (ticks - k[i].mTime) / (k[i + 1].mTime - k[i].mTime);
        return k[i].mValue + (k[i + 1].mValue - k[i].mValue) * (ai_real)f;
    };
    T = vec(ch->mPositionKeys, ch->mNumPositionKeys, T);
    S = vec(ch->mScalingKeys, ch->mNumScalingKeys, S);
    if (ch->mNumRotationKeys) {
        const aiQuatKey *k = ch->mRotationKeys;
        unsigned n = ch->mNumRotationKeys;
        if (ticks <= k[0].mTime) R = k[0].mValue;
        else if (ticks >= k[n - 1].mTime) R = k[n - 1].mValue;
        else {
            unsigned i = 0;
            while (i + 1 < n && k[i + 1].mTime <= ticks) i++;
            double f = (ticks - k[i].mTime) / (k[i + 1].mTime - k[i].mTime);
            aiQuaternion::Interpolate(R, k[i].mValue, k[i + 1].mValue, (ai_real)f);
        }
        R.Normalize();
    }
    // composed as assimp_view's AnimEvaluator does (T * R * S); the
    // aiMatrix4x4(scaling, rotation, position) constructor of 5.2.5 scales the
    // rows instead of the columns, which is wrong for non-uniform scale
    aiMatrix4x4 m(R.GetMatrix());
    m.a1 *= S.x;
    m.b1 *= S.x;
    m.c1 *= S.x;
    m.a2 *= S.y;
    m.b2 *= S.y;
    m.c2 *= S.y;
    m.a3 *= S.z;
    m.b3 *= S.z;
    m.c3 *= S.z;
    m.a4 = T.x;
    m.b4 = T.y;
    m.c4 = T.z;
    return m;
}

static void CollectWorld(const aiNode *n, const aiAnimation *a, double ticks, const aiMatrix4x4 &parent,
                         std::map<std::string, aiMatrix4x4> &out)
{
    aiMatrix4x4 w = parent * SampleLocal(n, a, ticks);
    out[n->mName.C_Str()] = w;
    for (unsigned i = 0; i < n->mNumChildren; i++) CollectWorld(n->mChildren[i], a, ticks, w, out);
}

static double Diff(const aiMatrix4x4 &a, const ra_mat4 &b)
{
    double d = 0;
    for (unsigned r = 0; r < 4; r++)
        for (unsigned c = 0; c < 4; c++) d = std::max(d, std::fabs((double)a[r][c] - b.m[r][c]));
    return d;
}

static int g_fixtures;
static long g_samples;
static double g_worst;

// A fingerprint of what an import gives: every node's name and transform,
// every channel's keys, every mesh's vertices and faces, every camera; FNV-1a
// over the bytes, so two imports agree exactly or not at all.
struct Fingerprint {
    uint64_t h = 1469598103934665603ull;
    void Add(const void *p, size_t n)
    {
        for (size_t i = 0; i < n; i++) h = (h ^ ((const uint8_t *)p)[i]) * 1099511628211ull;
    }
    void Add(const aiString &s) { Add(s.C_Str(), s.length); }
    void Node(const aiNode *n)
    {
        Add(n->mName);
        Add(&n->mTransformation, sizeof n->mTransformation);
        Add(n->mMeshes, n->mNumMeshes * sizeof *n->mMeshes);
        for (unsigned i = 0; i < n->mNumChildren; i++) Node(n->mChildren[i]);
    }
    void Scene(const aiScene *s)
    {
        Node(s->mRootNode);
        for (unsigned a = 0; a < s->mNumAnimations; a++) {
            const aiAnimation *an = s->mAnimations[a];
            Add(an->mName);
            Add(&an->mDuration, sizeof an->mDuration);
            for (unsigned c = 0; c < an->mNumChannels; c++) {
                const aiNodeAnim *ch = an->mChannels[c];
                Add(ch->mNodeName);
                for (unsigned k = 0; k < ch->mNumPositionKeys; k++) Add(&ch->mPositionKeys[k], sizeof(double) + 12);
                for (unsigned k = 0; k < ch->mNumRotationKeys; k++) Add(&ch->mRotationKeys[k], sizeof(double) + 16);
                for (unsigned k = 0; k < ch->mNumScalingKeys; k++) Add(&ch->mScalingKeys[k], sizeof(double) + 12);
            }
        }
        for (unsigned m = 0; m < s->mNumMeshes; m++) {
            const aiMesh *me = s->mMeshes[m];
            Add(me->mVertices, me->mNumVertices * sizeof *me->mVertices);
            for (unsigned f = 0; f < me->mNumFaces; f++)
                Add(me->mFaces[f].mIndices, me->mFaces[f].mNumIndices * sizeof(unsigned));
            Add(&me->mNumBones, sizeof me->mNumBones);
        }
        for (unsigned c = 0; c < s->mNumCameras; c++) {
            Add(s->mCameras[c]->mName);
            Add(&s->mCameras[c]->mHorizontalFOV, sizeof(float));
        }
    }
};

static uint64_t FingerprintOf(const aiScene *s)
{
    Fingerprint f;
    f.Scene(s);
    return f.h;
}

static int g_mapped_compared;

static void TestFixture(const std::string &dir, const std::string &name)
{
    std::string path = dir + "/" + name;
    std::vector<uint8_t> bytes = ReadAll(path);
    ra_options opt;
    ra_options_init(&opt);
    if (IsBody(name)) ra_options_add(&opt, "format", "lego_ani_body");
    ra_error err;
    ra_error_clear(&err);
    ra_document *doc = nullptr;
    bool ok = ra_document_load(bytes.data(), bytes.size(), path.c_str(), &opt, &doc, &err) == RA_OK;
    const ra_format *fmt = ra_format_detect(bytes.data(), bytes.size(), path.c_str());
    std::string fmt_id = IsBody(name) ? "lego_ani" : fmt ? fmt->id : "?";

    Assimp::Importer imp;
    const aiScene *sc = Import(imp, path, "", aiProcess_ValidateDataStructure);
    if (!ok) {
        // a broken fixture: the shim fails the same way, with the error line text
        CHECK(!sc, "%s should not import", name.c_str());
        std::string e = imp.GetErrorString();
        CHECK(e.find(fmt_id.substr(0, 8)) != std::string::npos && e.find("(at byte ") != std::string::npos,
              "%s: error '%s'", name.c_str(), e.c_str());
        return;
    }
    g_fixtures++;
    CHECK(sc != nullptr, "%s: ReadFile with ValidateDataStructure failed: %s", name.c_str(), imp.GetErrorString());
    if (!sc) {
        ra_document_free(doc);
        return;
    }
    // ReadFile with Assimp's own file system maps the file; the same bytes
    // read through another IOSystem (ReadFileFromMemory's) import the same
    if (!IsBody(name)) {
        std::vector<char> esc(2 * path.size() + 16);
        ra_options_escape(path.c_str(), esc.data(), esc.size());
        Assimp::Importer mem;
        retroanim::RegisterImporters(mem);
        mem.SetPropertyString(retroanim::kOptionsProperty, std::string("source_path=") + esc.data());
        std::string ext = name.substr(name.rfind('.') + 1);
        const aiScene *ms =
            mem.ReadFileFromMemory(bytes.data(), bytes.size(), aiProcess_ValidateDataStructure, ext.c_str());
        CHECK(ms && FingerprintOf(ms) == FingerprintOf(sc), "%s: mapped and read-through imports differ (%s)",
              name.c_str(), ms ? "scene" : mem.GetErrorString());
        g_mapped_compared++;
    }
    const ra_scene &s = doc->scene;
    const aiNode *top = sc->mRootNode;
    if (s.mesh_count) { // the file's geometry instead of the skeleton mesh
        CHECK(sc->mNumMeshes == s.mesh_count && !(sc->mFlags & AI_SCENE_FLAGS_INCOMPLETE), "%s: %u meshes, want %zu",
              name.c_str(), sc->mNumMeshes, s.mesh_count);
        CheckGeometry(s, sc, name.c_str(), true);
    } else {
        CHECK(sc->mNumMeshes == 1 && !(sc->mFlags & AI_SCENE_FLAGS_INCOMPLETE), "%s: skeleton mesh", name.c_str());
        // the mesh hangs on the aiScene root, which is an identity node: RootNode
        // itself, or SceneRoot above a RootNode that turns the scene
        CHECK(top->mNumMeshes == 1 && top->mTransformation.IsIdentity(), "%s: the mesh hangs on an identity root",
              name.c_str());
    }
    const ra_mat4 identity = ra_m4_identity();
    const bool wrapped = ra_m4_max_abs_diff(&s.nodes[0].transform, &identity) != 0;
    CHECK(wrapped ? (top->mName == aiString("SceneRoot") && top->mNumChildren == 1 &&
                     top->mChildren[0]->mName == aiString("RootNode"))
                  : top->mName == aiString("RootNode"),
          "%s: root %s (RootNode %s identity)", name.c_str(), top->mName.C_Str(), wrapped ? "is not" : "is");
    // inverse bind matrices: exact bottom row (glTF's validator requires it), and
    // the inverse of each bone's rest world matrix
    if (sc->mNumMeshes == 1 && !s.mesh_count) {
        const aiMesh *mesh = sc->mMeshes[0];
        double worst = 0;
        for (unsigned b = 0; b < mesh->mNumBones; b++) {
            const aiBone *bone = mesh->mBones[b];
            const aiMatrix4x4 &o = bone->mOffsetMatrix;
            CHECK(o.d1 == 0 && o.d2 == 0 && o.d3 == 0 && o.d4 == 1, "%s: bone %s offset bottom row", name.c_str(),
                  bone->mName.C_Str());
            const aiNode *n = top->FindNode(bone->mName);
            CHECK(n != nullptr, "%s: bone %s has a node", name.c_str(), bone->mName.C_Str());
            if (!n) continue;
            aiMatrix4x4 w = n->mTransformation;
            for (const aiNode *p = n->mParent; p; p = p->mParent) w = p->mTransformation * w;
            aiMatrix4x4 id = o * w;
            for (unsigned r = 0; r < 4; r++)
                for (unsigned c = 0; c < 4; c++)
                    worst = std::max(worst, (double)std::fabs(id[r][c] - (r == c ? 1.0f : 0.0f)));
        }
        CHECK(worst < 1e-4, "%s: offset * rest world differs from identity by %g", name.c_str(), worst);
    }
    CHECK(sc->mNumAnimations == s.animation_count, "%s: animations", name.c_str());
    CHECK(sc->mNumCameras == s.camera_count, "%s: cameras", name.c_str());
    for (size_t i = 0; i < s.node_count; i++)
        CHECK(sc->mRootNode->FindNode(s.nodes[i].name) != nullptr, "%s: node %s", name.c_str(), s.nodes[i].name);
    // A format that samples a curve (Homeworld's TCB splines) is compared with
    // its own keys' playback here: test_homeworld bounds keys against pose.
    const bool sampled = fmt_id == "homeworld_mad";
    auto reference = [&](size_t anim, double t, ra_mat4 *out) {
        if (sampled) {
            ra_scene_sample_world(&s, anim, t, out);
            return;
        }
        ra_error e2;
        ra_error_clear(&e2);
        ra_document_pose(doc, anim, t, out, &e2);
    };
    auto loops_of = [&](size_t anim) {
        bool loops = false;
        for (size_t c = 0; c < s.animations[anim].channel_count; c++)
            loops = loops || s.animations[anim].channels[c].post_state == RA_BEHAVIOUR_REPEAT;
        return loops;
    };
    for (unsigned ai = 0; ai < sc->mNumAnimations && ai < s.animation_count; ai++) {
        const aiAnimation *an = sc->mAnimations[ai];
        CHECK(an->mName == aiString(s.animations[ai].name), "%s: animation %u's name", name.c_str(), ai);
        CHECK(an->mTicksPerSecond == 1.0, "%s: 1 tick = 1 second", name.c_str());
        CHECK(std::fabs(an->mDuration - s.animations[ai].duration) < 1e-9, "%s: duration", name.c_str());
        for (unsigned c = 0; c < an->mNumChannels; c++) {
            const aiNode *n = sc->mRootNode->FindNode(an->mChannels[c]->mNodeName);
            CHECK(n && (n != sc->mRootNode || s.node_count == 1), "%s: channel on an existing, non-root node",
                  name.c_str());
        }
        // consumer playback at every ms vs the reference evaluator
        std::vector<ra_mat4> pose(s.node_count);
        double worst = 0;
        std::string worst_at;
        // past the end a REPEAT channel's game pose may start over while the
        // keys hold, so looping animations are compared up to their end only
        bool loops = loops_of(ai);
        long last = (long)(s.animations[ai].duration * 1000) + (loops ? 0 : 20);
        for (long ms = 0; ms <= last; ms++) {
            double t = (double)ms / 1000.0;
            reference(ai, t, pose.data());
            std::map<std::string, aiMatrix4x4> w;
            CollectWorld(sc->mRootNode, an, t, aiMatrix4x4(), w);
            for (size_t i = 0; i < s.node_count; i++) {
                double d = Diff(w[s.nodes[i].name], pose[i]);
                if (d > worst) {
                    worst = d;
                    worst_at = std::string(s.nodes[i].name) + " at " + std::to_string(ms) + " ms";
                }
            }
            g_samples++;
        }
        CHECK(worst <= 1e-4, "%s: animation %u: Assimp playback vs %s differ by %g (%s)", name.c_str(), ai,
              sampled ? "the keys" : "pose", worst, worst_at.c_str());
        g_worst = std::max(g_worst, worst);
    }
    if (sc->mNumCameras && fmt_id.rfind("lego_ani", 0) == 0) {
        const aiCamera *c = sc->mCameras[0];
        CHECK(std::fabs(c->mHorizontalFOV - (float)(M_PI / 4)) < 1e-6 && std::fabs(c->mAspect - 4.0f / 3.0f) < 1e-6 &&
                  c->mClipPlaneNear == 0.1f && c->mClipPlaneFar == 500.0f && c->mLookAt == aiVector3D(0, 0, -1),
              "%s: camera parameters", name.c_str());
    }

    // options: native ticks, no skeleton mesh
    {
        Assimp::Importer imp2;
        imp2.SetPropertyInteger(AI_CONFIG_IMPORT_NO_SKELETON_MESHES, 1);
        const aiScene *s2 = Import(imp2, path, "ticks=native", aiProcess_ValidateDataStructure);
        CHECK(s2 && s2->mNumMeshes == s.mesh_count && (s.mesh_count || (s2->mFlags & AI_SCENE_FLAGS_INCOMPLETE)),
              "%s: no skeleton mesh (the file's own meshes only)", name.c_str());
        if (s2 && s2->mNumAnimations)
            CHECK(std::fabs(s2->mAnimations[0]->mTicksPerSecond - s.animations[0].ticks_per_second) < 1e-9 &&
                      std::fabs(s2->mAnimations[0]->mDuration -
                                s.animations[0].duration * s.animations[0].ticks_per_second) < 1e-6,
                  "%s: native ticks", name.c_str());
    }
    // glb export and re-import keeps names and key values
    if (sc->mNumAnimations) {
        char tmpl[] = "/tmp/retroanim_test_XXXXXX";
        char *dir_out = mkdtemp(tmpl);
        std::string out = std::string(dir_out ? dir_out : "/tmp") + "/out.glb";
        Assimp::Exporter ex;
        CHECK(ex.Export(sc, "glb2", out) == AI_SUCCESS, "%s: glb export: %s", name.c_str(), ex.GetErrorString());
        Assimp::Importer back;
        const aiScene *g = back.ReadFile(out, 0);
        CHECK(g && g->mNumAnimations == sc->mNumAnimations, "%s: glb re-import: %s", name.c_str(),
              back.GetErrorString());
        for (unsigned ai = 0; g && ai < g->mNumAnimations && ai < sc->mNumAnimations; ai++) {
            const aiAnimation *a0 = sc->mAnimations[ai], *a1 = g->mAnimations[ai];
            CHECK(a1->mName == a0->mName, "%s: glb animation %u's name", name.c_str(), ai);
            for (unsigned c = 0; c < a0->mNumChannels; c++) {
                const aiNodeAnim *c0 = a0->mChannels[c];
                const aiNodeAnim *c1 = nullptr;
                for (unsigned k = 0; k < a1->mNumChannels; k++)
                    if (a1->mChannels[k]->mNodeName == c0->mNodeName) c1 = a1->mChannels[k];
                CHECK(c1 != nullptr, "%s: channel %s lost in glb", name.c_str(), c0->mNodeName.C_Str());
                if (!c1) continue;
                double tps = a1->mTicksPerSecond > 0 ? a1->mTicksPerSecond : 1000;
                CHECK(c1->mNumRotationKeys == c0->mNumRotationKeys && c1->mNumPositionKeys == c0->mNumPositionKeys,
                      "%s: %s key counts %u/%u vs %u/%u", name.c_str(), c0->mNodeName.C_Str(), c1->mNumRotationKeys,
                      c1->mNumPositionKeys, c0->mNumRotationKeys, c0->mNumPositionKeys);
                if (c1->mNumRotationKeys != c0->mNumRotationKeys || c1->mNumPositionKeys != c0->mNumPositionKeys)
                    continue;
                double dv = 0, dt = 0;
                for (unsigned k = 0; k < c0->mNumRotationKeys; k++) {
                    const aiQuaternion &p = c0->mRotationKeys[k].mValue, &q = c1->mRotationKeys[k].mValue;
                    dv = std::max({dv, (double)std::fabs(p.w - q.w), (double)std::fabs(p.x - q.x),
                                   (double)std::fabs(p.y - q.y), (double)std::fabs(p.z - q.z)});
                    dt = std::max(dt, std::fabs(c0->mRotationKeys[k].mTime - c1->mRotationKeys[k].mTime / tps));
                }
                for (unsigned k = 0; k < c0->mNumPositionKeys; k++) {
                    aiVector3D d = c0->mPositionKeys[k].mValue - c1->mPositionKeys[k].mValue;
                    dv = std::max({dv, (double)std::fabs(d.x), (double)std::fabs(d.y), (double)std::fabs(d.z)});
                    dt = std::max(dt, std::fabs(c0->mPositionKeys[k].mTime - c1->mPositionKeys[k].mTime / tps));
                }
                CHECK(dv < 1e-6 && dt < 1e-6, "%s: %s glb values differ by %g, times by %g s", name.c_str(),
                      c0->mNodeName.C_Str(), dv, dt);
            }
            // and the glb, played back, is still the game's pose (1/120 s steps)
            const aiAnimation *ga = a1;
            double tps = ga->mTicksPerSecond > 0 ? ga->mTicksPerSecond : 1000;
            bool loops = loops_of(ai);
            std::vector<ra_mat4> pose(s.node_count);
            double worst = 0;
            std::string worst_at;
            long steps = (long)std::floor(s.animations[ai].duration * 120 + 1e-9) + (loops ? 0 : 2);
            for (long i = 0; i <= steps; i++) {
                double t = std::min((double)i / 120.0, loops ? s.animations[ai].duration : 1e300);
                reference(ai, t, pose.data());
                // glTF stores key times as float32: a step key at t may come back up to one float32
                // ulp later, so at an instant on a step the glb is also read just after it
                std::map<std::string, aiMatrix4x4> w, w2;
                CollectWorld(g->mRootNode, ga, t * tps, aiMatrix4x4(), w);
                CollectWorld(g->mRootNode, ga, (t + 2 * ra_f32_ulp(t)) * tps, aiMatrix4x4(), w2);
                for (size_t k = 0; k < s.node_count; k++) {
                    if (!w.count(s.nodes[k].name)) continue;
                    double d = std::min(Diff(w[s.nodes[k].name], pose[k]), Diff(w2[s.nodes[k].name], pose[k]));
                    if (d > worst) {
                        worst = d;
                        worst_at = std::string(s.nodes[k].name) + " at " + std::to_string(t) + " s";
                    }
                }
            }
            CHECK(worst <= 2e-4, "%s: animation %u: glb playback vs %s differ by %g (%s)", name.c_str(), ai,
                  sampled ? "the keys" : "pose", worst, worst_at.c_str());
            if (name.rfind("rot_1rps.", 0) == 0) {
                // one full counter-clockwise turn per second: 90, 180, 270 degrees at the quarters
                const double want[] = {0, 90, 180, -90, 0};
                for (int q = 0; q <= 4; q++) {
                    std::map<std::string, aiMatrix4x4> w;
                    CollectWorld(g->mRootNode, ga, q * 0.25 * tps, aiMatrix4x4(), w);
                    const aiMatrix4x4 &m = w["rot_1rps"];
                    double deg = std::atan2((double)m.b1, (double)m.a1) * 180 / M_PI;
                    double d = std::fabs(std::remainder(deg - want[q], 360.0));
                    CHECK(d < 1e-3, "rot_1rps glb at %g s turns %g degrees, expected %g", q * 0.25, deg, want[q]);
                }
            }
        }
        unlink(out.c_str());
        if (dir_out) rmdir(dir_out);
    }
    ra_document_free(doc);
}

// Every prefix of a fixture either imports (and validates) or fails with a
// message through the shim: never a crash.
static long g_sweep;
static void SweepPrefixes(const std::string &dir, const std::string &name)
{
    std::vector<uint8_t> d = ReadAll(dir + "/" + name);
    std::string opts = IsBody(name) ? "format=lego_ani_body" : "";
    std::string hint = name.substr(name.rfind('.') + 1);
    for (char &c : hint) c = (char)std::tolower((unsigned char)c);
    if (hint == "anb") hint = "ani";
    for (size_t n = 0; n < d.size(); n++) {
        Assimp::Importer imp;
        retroanim::RegisterImporters(imp);
        if (!opts.empty()) imp.SetPropertyString(retroanim::kOptionsProperty, opts);
        const aiScene *s = imp.ReadFileFromMemory(n ? d.data() : (const uint8_t *)"", n,
                                                  aiProcess_ValidateDataStructure, hint.c_str());
        if (!s)
            CHECK(std::strlen(imp.GetErrorString()) > 0, "%s prefix %zu: failure without a message", name.c_str(), n);
        g_sweep++;
    }
}

// ---- regressions from review: files made with our writer -----------------------------
struct Built {
    ra_arena *arena = ra_arena_create(0);
    lego_ani ani{};
    std::vector<uint8_t> bytes;
    ~Built() { ra_arena_destroy(arena); }
    Built()
    {
        ani.has_header = true;
        ani.magic = LEGO_ANI_MAGIC;
        ani.bounding_radius = 1;
        ani.val3 = 1;
        ani.duration = 1000;
    }
    lego_node *Nodes(lego_node *parent, uint32_t n)
    {
        parent->num_children = n;
        parent->children = (lego_node *)ra_arena_array(arena, n, sizeof(lego_node));
        return parent->children;
    }
    void Name(lego_node *nd, const std::string &nm)
    {
        nd->name_len = (uint32_t)nm.size();
        nd->name = ra_arena_strndup(arena, nm.data(), nm.size());
    }
    void Write()
    {
        ra_writer w;
        ra_writer_init(&w);
        ra_error e;
        ra_error_clear(&e);
        if (lego_ani_write(&ani, &w, &e) == RA_OK) bytes.assign(w.data, w.data + w.size);
        ra_writer_free(&w);
    }
};

static const aiScene *ImportBytes(Assimp::Importer &imp, const std::vector<uint8_t> &b, const std::string &opts = "")
{
    retroanim::RegisterImporters(imp);
    if (!opts.empty()) imp.SetPropertyString(retroanim::kOptionsProperty, opts);
    return imp.ReadFileFromMemory(b.data(), b.size(), aiProcess_ValidateDataStructure, "ani");
}

static void Regressions()
{
    // 300 visibility keys: metadata text past aiString's 1023 bytes is split
    // into flat entries, and export (which copies the scene) does not abort
    {
        Built b;
        lego_node *n = &b.ani.root;
        b.Name(n, "ROOT");
        n->num_trans = 1;
        n->trans = (lego_trans_key *)ra_arena_array(b.arena, 1, sizeof(lego_trans_key));
        n->trans[0] = {0x01000000u, 1, 2, 3};
        n->num_morph = 300;
        n->morph = (lego_morph_key *)ra_arena_array(b.arena, 300, sizeof(lego_morph_key));
        for (uint32_t i = 0; i < 300; i++) n->morph[i] = {i * 3, (uint8_t)(i & 1)};
        b.Write();
        Assimp::Importer imp;
        const aiScene *s = ImportBytes(imp, b.bytes);
        CHECK(s != nullptr, "300 morph keys: %s", imp.GetErrorString());
        if (s) {
            const aiNode *root = s->mRootNode->FindNode("ROOT");
            aiString part0, part1;
            CHECK(root && root->mMetaData && root->mMetaData->Get("lego.visibility", part0) &&
                      root->mMetaData->Get("lego.visibility.1", part1) && part0.length == 1023,
                  "long metadata split into flat entries");
            char tmpl[] = "/tmp/retroanim_reg_XXXXXX";
            char *dir = mkdtemp(tmpl);
            std::string out = std::string(dir ? dir : "/tmp") + "/m.assbin";
            Assimp::Exporter ex;
            CHECK(ex.Export(s, "assbin", out) == AI_SUCCESS, "export with long metadata: %s", ex.GetErrorString());
            unlink(out.c_str());
            if (dir) rmdir(dir);
        }
    }
    // nine actors: detection by signature looks at a prefix only
    {
        Built b;
        b.ani.num_actors = 9;
        b.ani.actors = (lego_actor *)ra_arena_array(b.arena, 9, sizeof(lego_actor));
        for (uint32_t i = 0; i < 9; i++) {
            std::string nm = "ACTOR" + std::to_string(i);
            b.ani.actors[i] = {(uint32_t)nm.size(), ra_arena_strndup(b.arena, nm.data(), nm.size()), 2};
        }
        b.Name(&b.ani.root, "ROOT");
        b.ani.root.num_trans = 1;
        b.ani.root.trans = (lego_trans_key *)ra_arena_array(b.arena, 1, sizeof(lego_trans_key));
        b.ani.root.trans[0] = {0x01000000u, 1, 0, 0};
        b.Write();
        std::string p = "/tmp/retroanim_nine_actors.bin";
        std::ofstream(p, std::ios::binary).write((const char *)b.bytes.data(), (std::streamsize)b.bytes.size());
        Assimp::Importer imp;
        retroanim::RegisterImporters(imp);
        CHECK(imp.ReadFile(p, aiProcess_ValidateDataStructure) != nullptr, "9 actors by signature: %s",
              imp.GetErrorString());
        unlink(p.c_str());
    }
    // names longer than aiString holds stay unique after the cut
    {
        Built b;
        b.Name(&b.ani.root, "ROOT");
        lego_node *c = b.Nodes(&b.ani.root, 2);
        b.Name(&c[0], std::string(1500, 'A') + "1");
        b.Name(&c[1], std::string(1500, 'A') + "2");
        for (int k = 0; k < 2; k++) {
            c[k].num_trans = 1;
            c[k].trans = (lego_trans_key *)ra_arena_array(b.arena, 1, sizeof(lego_trans_key));
            c[k].trans[0] = {0x01000000u, (float)k, 0, 0};
        }
        b.Write();
        Assimp::Importer imp;
        const aiScene *s = ImportBytes(imp, b.bytes);
        CHECK(s && s->mRootNode->FindNode("ROOT") && s->mRootNode->FindNode("ROOT")->mNumChildren == 2,
              "long names: %s", imp.GetErrorString());
        if (s) {
            const aiNode *r = s->mRootNode->FindNode("ROOT");
            CHECK(r->mChildren[0]->mName != r->mChildren[1]->mName && r->mChildren[0]->mName.length <= 1023,
                  "long names unique and within aiString");
        }
    }
    // the depth limit: a chain deeper than max_depth is refused with LIMIT,
    // and max_depth itself is bounded
    {
        Built b;
        lego_node *n = &b.ani.root;
        for (int d = 0; d < 300; d++) {
            b.Name(n, "N");
            n = b.Nodes(n, 1);
        }
        b.Name(n, "LEAF");
        b.Write();
        ra_error e;
        ra_error_clear(&e);
        ra_document *doc = nullptr;
        CHECK(ra_document_load(b.bytes.data(), b.bytes.size(), "deep.ani", nullptr, &doc, &e) == RA_ERR_LIMIT,
              "300-deep chain refused by the default max_depth: %s", e.msg);
        ra_options o;
        ra_options_init(&o);
        ra_options_add(&o, "max_depth", "400");
        ra_error_clear(&e);
        CHECK(ra_document_load(b.bytes.data(), b.bytes.size(), "deep.ani", &o, &doc, &e) == RA_OK,
              "300-deep chain loads with max_depth=400: %s", e.msg);
        ra_document_free(doc);
        doc = nullptr;
        ra_options_add(&o, "max_depth", "1000000");
        ra_error_clear(&e);
        CHECK(ra_document_load(b.bytes.data(), b.bytes.size(), "deep.ani", &o, &doc, &e) == RA_ERR_USAGE,
              "max_depth above the limit refused");
    }
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        std::fprintf(stderr, "usage: test_assimp FIXTURE_DIR\n");
        return 2;
    }
    std::string dir = argv[1];
    std::vector<std::pair<std::string, std::string>> names; // (dir, file)
    for (int a = 1; a < argc; a++) {
        std::vector<std::string> here;
        if (DIR *d = opendir(argv[a])) {
            while (dirent *e = readdir(d)) {
                std::string n = e->d_name;
                if (IsBody(n) || (n.find('.') != std::string::npos && ra_format_by_extension(n.c_str())))
                    here.push_back(n);
            }
            closedir(d);
        }
        std::sort(here.begin(), here.end());
        CHECK(here.size() >= 10, "fixtures found in %s: %zu", argv[a], here.size());
        for (const auto &n : here) names.emplace_back(argv[a], n);
    }
    for (const auto &n : names) TestFixture(n.first, n.second);
    for (const auto &n : names) SweepPrefixes(n.first, n.second);

    Regressions();
    // signature detection: an .ani under another name still imports
    {
        std::vector<uint8_t> d = ReadAll(dir + "/hierarchy.ani");
        std::string p = "/tmp/retroanim_sig_test.dat";
        std::ofstream(p, std::ios::binary).write((const char *)d.data(), (std::streamsize)d.size());
        Assimp::Importer imp;
        retroanim::RegisterImporters(imp);
        const aiScene *s = imp.ReadFile(p, aiProcess_ValidateDataStructure);
        CHECK(s && s->mNumAnimations == 1, "import by signature: %s", imp.GetErrorString());
        unlink(p.c_str());
    }
    // a malformed option is refused with a message
    {
        Assimp::Importer imp;
        const aiScene *s = Import(imp, dir + "/minimal.ani", "coords=sideways", 0);
        CHECK(!s && std::string(imp.GetErrorString()).find("coords") != std::string::npos, "bad option: %s",
              imp.GetErrorString());
    }
    // every misuse of the property fails the import with a message naming the key
    for (const char *kv : {"max_key_angel=2", "memory_limit=64Q", "max_depth=5 ", "max_keys=nan", "max_keys=inf",
                           "max_key_angle=180", "sample_rate=30", "ticks=hours", "max_file_size=abc", "format=nope"}) {
        Assimp::Importer imp;
        const aiScene *s = Import(imp, dir + "/minimal.ani", kv, 0);
        std::string key = std::string(kv).substr(0, std::string(kv).find('='));
        CHECK(!s && std::string(imp.GetErrorString()).find(key) != std::string::npos, "property %s: %s", kv,
              s ? "imported" : imp.GetErrorString());
    }
    // a value with an escaped ';' and ',' arrives whole: a CINF in a folder named "a;b,c"
    {
        std::string odd = "/tmp/retroanim_opt_a;b,c";
        mkdir(odd.c_str(), 0755);
        std::string mp = dir + "/../metroid_prime/";
        std::vector<uint8_t> cinf = ReadAll(mp + "upper.CINF");
        std::ofstream(odd + "/sk.CINF", std::ios::binary)
            .write((const char *)cinf.data(), (std::streamsize)cinf.size());
        std::vector<char> esc(2 * odd.size() + 16);
        ra_options_escape((odd + "/sk.CINF").c_str(), esc.data(), esc.size());
        Assimp::Importer imp;
        const aiScene *s =
            Import(imp, mp + "upper.ANIM", std::string("cinf=") + esc.data(), aiProcess_ValidateDataStructure);
        Assimp::Importer ref;
        const aiScene *r = Import(ref, mp + "upper.ANIM", "", aiProcess_ValidateDataStructure);
        CHECK(s && r && s->mRootNode->mNumChildren == r->mRootNode->mNumChildren &&
                  s->mAnimations[0]->mNumChannels == r->mAnimations[0]->mNumChannels,
              "escaped cinf path: %s", s ? "different skeleton" : imp.GetErrorString());
        unlink((odd + "/sk.CINF").c_str());
        rmdir(odd.c_str());
    }
    std::printf("fixtures imported: %d (%d also read through a stream: the same scene), ms compared: %ld, worst "
                "Assimp-playback difference %.3g, prefixes swept: %ld\n",
                g_fixtures, g_mapped_compared, g_samples, g_worst, g_sweep);
    CHECK(g_mapped_compared >= 10, "mapped imports compared: %d", g_mapped_compared);
    std::printf("test_assimp: %d passed, %d failed\n%d passed, %d failed\n", g_pass, g_fail, g_pass, g_fail);
    return g_fail ? 1 : 0;
}
