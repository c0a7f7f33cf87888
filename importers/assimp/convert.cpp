// ra_scene -> aiScene, shared by every format's importer.
#include <assimp/GltfMaterial.h>
#include <assimp/SkeletonMeshBuilder.h>
#include <assimp/anim.h>
#include <assimp/camera.h>
#include <assimp/material.h>
#include <assimp/metadata.h>
#include <assimp/scene.h>
#include <assimp/texture.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <exception>
#include <limits>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "retroanim/assimp.hpp"
#include "retroanim/ra_document.h"
#include "retroanim/ra_image.h"

namespace retroanim {
namespace {

aiMatrix4x4 ToAi(const ra_mat4 &m)
{
    return aiMatrix4x4((ai_real)m.m[0][0], (ai_real)m.m[0][1], (ai_real)m.m[0][2], (ai_real)m.m[0][3],
                       (ai_real)m.m[1][0], (ai_real)m.m[1][1], (ai_real)m.m[1][2], (ai_real)m.m[1][3],
                       (ai_real)m.m[2][0], (ai_real)m.m[2][1], (ai_real)m.m[2][2], (ai_real)m.m[2][3],
                       (ai_real)m.m[3][0], (ai_real)m.m[3][1], (ai_real)m.m[3][2], (ai_real)m.m[3][3]);
}

// Name of the identity node put above a root that carries a transform: the
// base name, or base#2, #3, ... when the scene already uses it.
std::string WrapperName(const ra_scene &s)
{
    std::unordered_set<std::string> used;
    for (size_t i = 0; i < s.node_count; i++) used.insert(s.nodes[i].name);
    std::string name = "SceneRoot";
    for (size_t k = 2; used.count(name); k++) name = "SceneRoot#" + std::to_string(k);
    return name;
}

aiVector3D ToAi(const ra_vec3 &v) { return aiVector3D((ai_real)v.x, (ai_real)v.y, (ai_real)v.z); }

// aiString holds at most MAXLEN-1 bytes.  Longer text (JSON lists of keys)
// is split into flat string entries "key", "key.1", "key.2", ... to
// concatenate in order.  (A nested aiMetadata would be neater, but Assimp
// 5.2.5's SceneCombiner cannot copy one and aborts inside Exporter::Export.)
constexpr size_t kMaxString = MAXLEN - 1;

size_t StringEntries(const char *s)
{
    size_t n = std::strlen(s);
    return n <= kMaxString ? 1 : (n + kMaxString - 1) / kMaxString;
}

unsigned SetString(aiMetadata *md, unsigned idx, const std::string &key, const char *s)
{
    size_t n = std::strlen(s), parts = StringEntries(s);
    for (size_t i = 0; i < parts; i++) {
        size_t len = std::min(kMaxString, n - std::min(n, i * kMaxString));
        md->Set(idx++, i ? key + "." + std::to_string(i) : key, aiString(std::string(s + i * kMaxString, len)));
    }
    return idx;
}

aiMetadata *ToAi(const ra_meta_list &list, const std::vector<std::pair<std::string, std::string>> &extra = {})
{
    size_t n = 0;
    for (size_t k = 0; k < list.count; k++)
        n += list.items[k].type == RA_META_STRING ? StringEntries(list.items[k].u.s) : 1;
    for (const auto &kv : extra) n += StringEntries(kv.second.c_str());
    if (!n) return nullptr;
    aiMetadata *md = aiMetadata::Alloc((unsigned)n);
    unsigned i = 0;
    for (size_t k = 0; k < list.count; k++) {
        const ra_meta &e = list.items[k];
        switch (e.type) {
        case RA_META_BOOL: md->Set(i++, e.key, e.u.b); break;
        case RA_META_INT:
            if (e.u.i >= std::numeric_limits<int32_t>::min() && e.u.i <= std::numeric_limits<int32_t>::max())
                md->Set(i++, e.key, (int32_t)e.u.i);
            else if (e.u.i >= 0) md->Set(i++, e.key, (uint64_t)e.u.i);
            else md->Set(i++, e.key, (double)e.u.i);
            break;
        case RA_META_DOUBLE: md->Set(i++, e.key, e.u.d); break;
        case RA_META_STRING: i = SetString(md, i, e.key, e.u.s); break;
        case RA_META_VEC3: md->Set(i++, e.key, ToAi(e.u.v)); break;
        }
    }
    for (const auto &kv : extra) i = SetString(md, i, kv.first, kv.second.c_str());
    return md;
}

aiAnimBehaviour ToAi(ra_behaviour b)
{
    switch (b) {
    case RA_BEHAVIOUR_CONSTANT: return aiAnimBehaviour_CONSTANT;
    case RA_BEHAVIOUR_LINEAR: return aiAnimBehaviour_LINEAR;
    case RA_BEHAVIOUR_REPEAT: return aiAnimBehaviour_REPEAT;
    default: return aiAnimBehaviour_DEFAULT;
    }
}

// The wrapper root is no joint of its own: its knob's vertices go to the
// file's root (both are unanimated), so that no skin is bound to the node
// that stands for the whole scene (Assimp's FBX exporter writes no model for
// the scene root, so a bone there would have no node to follow).
void FoldWrapperBone(const aiNode *wrapper, const aiNode *root, aiScene *out)
{
    for (unsigned m = 0; m < out->mNumMeshes; m++) {
        aiMesh *mesh = out->mMeshes[m];
        aiBone *from = nullptr, *to = nullptr;
        unsigned from_index = 0;
        for (unsigned b = 0; b < mesh->mNumBones; b++) {
            if (mesh->mBones[b]->mName == wrapper->mName) from = mesh->mBones[b], from_index = b;
            if (mesh->mBones[b]->mName == root->mName) to = mesh->mBones[b];
        }
        if (!from || !to) continue;
        aiVertexWeight *w = new aiVertexWeight[to->mNumWeights + from->mNumWeights];
        std::copy(to->mWeights, to->mWeights + to->mNumWeights, w);
        std::copy(from->mWeights, from->mWeights + from->mNumWeights, w + to->mNumWeights);
        delete[] to->mWeights;
        to->mWeights = w;
        to->mNumWeights += from->mNumWeights;
        delete from;
        for (unsigned b = from_index; b + 1 < mesh->mNumBones; b++) mesh->mBones[b] = mesh->mBones[b + 1];
        mesh->mNumBones--;
    }
}

// The builder draws a pyramid from each node to each child and a knob on each
// leaf, sized by the distances; nodes that share a position (common at rest)
// give triangles of zero area.  Post-processing that drops degenerate faces
// (the `assimp info` preset among others) then removes the whole mesh and the
// import fails with "No meshes remaining".  Each such triangle becomes a small
// one at the same place: its corners move along x, y and z by 1 % of the
// skeleton's size (the builder gives every face its own vertices, all
// weighted to one bone, so the skinning is unchanged).
void MendDegenerateFaces(aiScene *out)
{
    for (unsigned m = 0; m < out->mNumMeshes; m++) {
        aiMesh *mesh = out->mMeshes[m];
        if (!mesh->mNumVertices) continue;
        aiVector3D lo = mesh->mVertices[0], hi = lo;
        for (unsigned v = 1; v < mesh->mNumVertices; v++) {
            const aiVector3D &p = mesh->mVertices[v];
            lo = aiVector3D(std::min(lo.x, p.x), std::min(lo.y, p.y), std::min(lo.z, p.z));
            hi = aiVector3D(std::max(hi.x, p.x), std::max(hi.y, p.y), std::max(hi.z, p.z));
        }
        ai_real size = (hi - lo).Length();
        ai_real k = std::isfinite(size) && size > 0 ? size * (ai_real)0.01 : (ai_real)0.01;
        const aiVector3D offset[3] = {aiVector3D(k, 0, 0), aiVector3D(0, k, 0), aiVector3D(0, 0, k)};
        for (unsigned f = 0; f < mesh->mNumFaces; f++) {
            const aiFace &face = mesh->mFaces[f];
            if (face.mNumIndices != 3) continue;
            aiVector3D *v[3] = {&mesh->mVertices[face.mIndices[0]], &mesh->mVertices[face.mIndices[1]],
                                &mesh->mVertices[face.mIndices[2]]};
            aiVector3D n = (*v[1] - *v[0]) ^ (*v[2] - *v[0]);
            if (n.Length() > k * k * (ai_real)1e-3) continue;
            for (int i = 0; i < 3; i++) *v[i] += offset[i];
            n = ((*v[1] - *v[0]) ^ (*v[2] - *v[0])).NormalizeSafe();
            if (mesh->mNormals)
                for (int i = 0; i < 3; i++) mesh->mNormals[face.mIndices[i]] = n;
        }
    }
}

// The builder inverts each bone's world matrix in float, so the bottom row of
// an offset matrix comes out as 0.99999988 instead of 1 and glTF's inverse
// bind matrices fail validation (ACCESSOR_INVALID_IBM).  They are recomputed
// here from the scene's double-precision rest transforms, as affine inverses
// with an exact bottom row (the mesh hangs on the identity scene root).
void SetBindMatrices(const ra_scene &s, aiScene *out)
{
    if (!out->mNumMeshes) return;
    std::vector<ra_mat4> world(s.node_count);
    std::unordered_map<std::string, size_t> index;
    index.reserve(s.node_count);
    for (size_t i = 0; i < s.node_count; i++) {
        world[i] = i ? ra_m4_mul(&world[(size_t)s.nodes[i].parent], &s.nodes[i].transform) : s.nodes[0].transform;
        index.emplace(s.nodes[i].name, i);
    }
    for (unsigned m = 0; m < out->mNumMeshes; m++) {
        aiMesh *mesh = out->mMeshes[m];
        for (unsigned b = 0; b < mesh->mNumBones; b++) {
            aiBone *bone = mesh->mBones[b];
            auto it = index.find(bone->mName.C_Str());
            ra_mat4 inv = ra_m4_identity(); // the wrapper root, or a singular bone
            if (it != index.end() && !ra_m4_invert_affine(&world[it->second], &inv)) inv = ra_m4_identity();
            aiMatrix4x4 o = ToAi(inv);
            o.d1 = 0;
            o.d2 = 0;
            o.d3 = 0;
            o.d4 = 1;
            bone->mOffsetMatrix = o;
        }
    }
}

// A skeleton mesh of finite but absurd size (a rest translation of 2.55e38
// is a valid float) overflows: its normals and areas come out infinite or
// zero in float, and post-processing (FindInvalidData, FindDegenerates)
// removes it, so that `assimp info` would refuse a file the CLI loads.  Such
// a scene keeps no mesh and is marked incomplete, as a mesh-less scene is.
bool MeshesPlayable(const aiScene *out)
{
    const ai_real limit = (ai_real)1e15; // squares and cross products stay finite in float
    for (unsigned m = 0; m < out->mNumMeshes; m++) {
        const aiMesh *mesh = out->mMeshes[m];
        for (unsigned v = 0; v < mesh->mNumVertices; v++) {
            const aiVector3D &p = mesh->mVertices[v];
            if (!(std::fabs(p.x) < limit && std::fabs(p.y) < limit && std::fabs(p.z) < limit)) return false;
            if (mesh->mNormals && !(std::isfinite(mesh->mNormals[v].x) && std::isfinite(mesh->mNormals[v].y) &&
                                    std::isfinite(mesh->mNormals[v].z)))
                return false;
        }
    }
    return true;
}

void DropMeshes(aiScene *out)
{
    for (unsigned m = 0; m < out->mNumMeshes; m++) delete out->mMeshes[m];
    delete[] out->mMeshes;
    out->mMeshes = nullptr;
    out->mNumMeshes = 0;
    for (unsigned m = 0; m < out->mNumMaterials; m++) delete out->mMaterials[m]; // the builder's
    delete[] out->mMaterials;
    out->mMaterials = nullptr;
    out->mNumMaterials = 0;
    std::vector<aiNode *> stack{out->mRootNode};
    while (!stack.empty()) {
        aiNode *n = stack.back();
        stack.pop_back();
        delete[] n->mMeshes;
        n->mMeshes = nullptr;
        n->mNumMeshes = 0;
        for (unsigned i = 0; i < n->mNumChildren; i++) stack.push_back(n->mChildren[i]);
    }
    out->mFlags |= AI_SCENE_FLAGS_INCOMPLETE;
}

aiTextureMapMode ToAi(ra_wrap w)
{
    return w == RA_WRAP_CLAMP    ? aiTextureMapMode_Clamp
           : w == RA_WRAP_MIRROR ? aiTextureMapMode_Mirror
                                 : aiTextureMapMode_Wrap;
}

// Embedded textures ("*0", "*1", ...) as PNG, as Assimp's own importers keep compressed images.
void ConvertTextures(const ra_scene &s, aiScene *out)
{
    if (!s.texture_count) return;
    out->mTextures = new aiTexture *[s.texture_count]();
    for (size_t t = 0; t < s.texture_count; t++) {
        const ra_texture &src = s.textures[t];
        uint8_t *png = nullptr;
        size_t size = 0;
        ra_error err;
        ra_error_clear(&err);
        if (ra_png_encode(src.rgba, src.width, src.height, &png, &size, &err) != RA_OK) {
            char msg[RA_ERROR_TEXT_MAX];
            ra_error_format(&err, msg, sizeof msg);
            throw std::runtime_error(std::string("retroanim: texture ") + src.name + ": " + msg);
        }
        aiTexture *tex = new aiTexture();
        out->mTextures[out->mNumTextures++] = tex;
        tex->mWidth = (unsigned)size;
        tex->mHeight = 0;
        std::strncpy(tex->achFormatHint, "png", sizeof tex->achFormatHint - 1);
        tex->mFilename = aiString(std::string(src.name) + ".png");
        tex->pcData = new aiTexel[(size + sizeof(aiTexel) - 1) / sizeof(aiTexel)];
        std::memcpy(tex->pcData, png, size);
        ra_free(png);
    }
}

// One aiMaterial per scene material, then a plain one for meshes without.
void ConvertMaterials(const ra_scene &s, aiScene *out)
{
    bool plain = false;
    for (size_t m = 0; m < s.mesh_count; m++) plain = plain || s.meshes[m].material < 0;
    size_t n = s.material_count + (plain ? 1 : 0);
    out->mMaterials = new aiMaterial *[n]();
    for (size_t i = 0; i < n; i++) {
        aiMaterial *mat = new aiMaterial();
        out->mMaterials[out->mNumMaterials++] = mat;
        if (i == s.material_count) {
            aiString name("retroanim.default");
            mat->AddProperty(&name, AI_MATKEY_NAME);
            continue;
        }
        const ra_material &src = s.materials[i];
        aiString name(src.name);
        mat->AddProperty(&name, AI_MATKEY_NAME);
        aiColor4D c((ai_real)src.base_color[0], (ai_real)src.base_color[1], (ai_real)src.base_color[2],
                    (ai_real)src.base_color[3]);
        mat->AddProperty(&c, 1, AI_MATKEY_COLOR_DIFFUSE);
        mat->AddProperty(&c, 1, AI_MATKEY_BASE_COLOR);
        ai_real opacity = (ai_real)src.base_color[3], metallic = 0, roughness = 1;
        mat->AddProperty(&opacity, 1, AI_MATKEY_OPACITY);
        mat->AddProperty(&metallic, 1, AI_MATKEY_METALLIC_FACTOR);
        mat->AddProperty(&roughness, 1, AI_MATKEY_ROUGHNESS_FACTOR);
        int two = src.double_sided ? 1 : 0;
        mat->AddProperty(&two, 1, AI_MATKEY_TWOSIDED);
        int shading = src.unlit ? aiShadingMode_Unlit : aiShadingMode_Gouraud;
        mat->AddProperty(&shading, 1, AI_MATKEY_SHADING_MODEL);
        aiString alpha(src.alpha_mode == RA_ALPHA_BLEND  ? "BLEND"
                       : src.alpha_mode == RA_ALPHA_MASK ? "MASK"
                                                         : "OPAQUE");
        mat->AddProperty(&alpha, AI_MATKEY_GLTF_ALPHAMODE);
        if (src.alpha_mode == RA_ALPHA_MASK) {
            ai_real cutoff = (ai_real)src.alpha_cutoff;
            mat->AddProperty(&cutoff, 1, AI_MATKEY_GLTF_ALPHACUTOFF);
        }
        if (src.texture >= 0) {
            const ra_texture &tex = s.textures[src.texture];
            aiString path("*" + std::to_string(src.texture));
            int u = ToAi(tex.wrap_s), v = ToAi(tex.wrap_t);
            for (aiTextureType type : {aiTextureType_DIFFUSE, aiTextureType_BASE_COLOR}) {
                mat->AddProperty(&path, AI_MATKEY_TEXTURE(type, 0));
                mat->AddProperty(&u, 1, AI_MATKEY_MAPPINGMODE_U(type, 0));
                mat->AddProperty(&v, 1, AI_MATKEY_MAPPINGMODE_V(type, 0));
            }
        }
    }
}

// Scene meshes as aiMeshes on their nodes (texture coordinates with v up, as
// Assimp keeps them); skinned ones with a bone per joint they use, on the
// aiScene's identity root (their vertices are in the scene's frame, the
// turn of a turned root included).
void ConvertMeshes(const ra_scene &s, const std::vector<aiNode *> &nodes, aiScene *out)
{
    out->mMeshes = new aiMesh *[s.mesh_count]();
    std::vector<std::vector<unsigned>> on_node(s.node_count);
    std::vector<unsigned> on_root;
    std::vector<ra_mat4> world;
    for (size_t i = 0; i < s.mesh_count; i++) {
        const ra_mesh &src = s.meshes[i];
        aiMesh *m = new aiMesh();
        out->mMeshes[out->mNumMeshes++] = m;
        if (src.skin >= 0 && out->mRootNode != nodes[0]) on_root.push_back((unsigned)i);
        else on_node[src.node].push_back((unsigned)i);
        m->mName = src.name;
        m->mPrimitiveTypes = aiPrimitiveType_TRIANGLE;
        m->mMaterialIndex = src.material >= 0 ? (unsigned)src.material : (unsigned)s.material_count;
        unsigned nv = src.vertex_count;
        m->mNumVertices = nv;
        m->mVertices = new aiVector3D[nv];
        for (unsigned v = 0; v < nv; v++)
            m->mVertices[v] = aiVector3D(src.positions[3 * v], src.positions[3 * v + 1], src.positions[3 * v + 2]);
        if (src.normals) {
            m->mNormals = new aiVector3D[nv];
            for (unsigned v = 0; v < nv; v++)
                m->mNormals[v] = aiVector3D(src.normals[3 * v], src.normals[3 * v + 1], src.normals[3 * v + 2]);
        }
        if (src.colors) {
            m->mColors[0] = new aiColor4D[nv];
            for (unsigned v = 0; v < nv; v++)
                m->mColors[0][v] =
                    aiColor4D(src.colors[4 * v], src.colors[4 * v + 1], src.colors[4 * v + 2], src.colors[4 * v + 3]);
        }
        if (src.uvs) {
            m->mTextureCoords[0] = new aiVector3D[nv];
            m->mNumUVComponents[0] = 2;
            for (unsigned v = 0; v < nv; v++)
                m->mTextureCoords[0][v] = aiVector3D(src.uvs[2 * v], 1 - src.uvs[2 * v + 1], 0);
        }
        m->mNumFaces = (unsigned)src.triangle_count;
        m->mFaces = new aiFace[src.triangle_count];
        for (size_t f = 0; f < src.triangle_count; f++) {
            aiFace &face = m->mFaces[f];
            face.mNumIndices = 3;
            face.mIndices = new unsigned[3];
            for (int k = 0; k < 3; k++) face.mIndices[k] = src.indices[3 * f + (size_t)k];
        }
        if (src.skin < 0) continue;
        if (world.empty()) {
            world.resize(s.node_count);
            for (size_t n = 0; n < s.node_count; n++)
                world[n] =
                    n ? ra_m4_mul(&world[(size_t)s.nodes[n].parent], &s.nodes[n].transform) : s.nodes[0].transform;
        }
        const ra_skin &sk = s.skins[src.skin];
        std::vector<std::vector<aiVertexWeight>> weights(sk.joint_count);
        for (unsigned v = 0; v < nv; v++)
            for (int k = 0; k < 4; k++) {
                float w = src.weights[4 * v + (unsigned)k];
                if (w > 0) weights[src.joints[4 * v + (unsigned)k]].push_back(aiVertexWeight(v, w));
            }
        unsigned used = 0;
        for (const auto &w : weights) used += !w.empty();
        m->mBones = new aiBone *[used]();
        for (size_t j = 0; j < sk.joint_count; j++) {
            if (weights[j].empty()) continue;
            aiBone *bone = new aiBone();
            m->mBones[m->mNumBones++] = bone;
            bone->mName = s.nodes[sk.joints[j]].name;
            ra_mat4 inv = ra_m4_identity();
            if (!ra_m4_invert_affine(&world[sk.joints[j]], &inv)) inv = ra_m4_identity();
            bone->mOffsetMatrix = ToAi(inv);
            bone->mNumWeights = (unsigned)weights[j].size();
            bone->mWeights = new aiVertexWeight[weights[j].size()];
            std::copy(weights[j].begin(), weights[j].end(), bone->mWeights);
        }
    }
    for (size_t n = 0; n < s.node_count; n++) {
        if (on_node[n].empty()) continue;
        nodes[n]->mMeshes = new unsigned[on_node[n].size()];
        nodes[n]->mNumMeshes = (unsigned)on_node[n].size();
        std::copy(on_node[n].begin(), on_node[n].end(), nodes[n]->mMeshes);
    }
    if (!on_root.empty()) {
        out->mRootNode->mMeshes = new unsigned[on_root.size()];
        out->mRootNode->mNumMeshes = (unsigned)on_root.size();
        std::copy(on_root.begin(), on_root.end(), out->mRootNode->mMeshes);
    }
}

} // namespace

namespace {

// One channel's keys to fill: the aiNodeAnim is in the scene already, so
// what a failure leaves is freed by the aiScene's destructor.
struct KeyJob {
    const ra_channel *ch;
    aiNodeAnim *na;
    double tps; // ticks per second with ticks=native; 0: seconds
    // rotation keys cut as a load cuts them (ra_document_key_passes; ConvertSettings::max_key_angle)
    const ra_key_cutter *cut;
    size_t added;           // the keys the cut inserts (SIZE_MAX: count them)
    ra_key_chunks *release; // ConvertSettings::release_keys
};

// Key time in ticks; seconds are rounded down to float32 (ra_f32_floor), as
// glTF stores them: each key stays at or before its instant.
inline double Ticks(double t, double tps) { return tps > 0 ? t * tps : (double)ra_f32_floor(t); }

// Rotation keys into an aiQuatKey array of cap keys (ra_key_sink); end: one
// past the last key written, or past cap when the keys would not fit (and
// then none of them is written)
struct RotationSink {
    aiQuatKey *out;
    size_t cap;
    double tps;
    size_t end;
    static void Put(void *ctx, const ra_quat_key *k, size_t at, size_t n)
    {
        RotationSink &s = *static_cast<RotationSink *>(ctx);
        if (at > s.cap || n > s.cap - at) {
            s.end = s.cap + 1;
            return;
        }
        s.end = at + n;
        for (size_t i = 0; i < n; i++) {
            const ra_quat &q = k[i].q;
            s.out[at + i] =
                aiQuatKey(Ticks(k[i].t, s.tps), aiQuaternion((ai_real)q.w, (ai_real)q.x, (ai_real)q.y, (ai_real)q.z));
        }
    }
};

void FillChannel(const KeyJob &j)
{
    const ra_channel &ch = *j.ch;
    aiNodeAnim *na = j.na;
    if (ch.position_count) {
        na->mPositionKeys = new aiVectorKey[ch.position_count];
        na->mNumPositionKeys = (unsigned)ch.position_count;
        for (size_t k = 0; k < ch.position_count; k++)
            na->mPositionKeys[k] = aiVectorKey(Ticks(ch.position[k].t, j.tps), ToAi(ch.position[k].v));
        ra_key_chunks_drop(j.release, ch.position);
    }
    if (ch.rotation_count) {
        // the keys, or with the density keys inserted on the way
        // (counted by the load, or here)
        size_t n = ch.rotation_count;
        size_t added = !j.cut ? 0 : j.added != SIZE_MAX ? j.added : ra_key_cut_count(j.cut, ch.rotation, n);
        na->mRotationKeys = new aiQuatKey[n + added];
        na->mNumRotationKeys = (unsigned)(n + added);
        RotationSink sink{na->mRotationKeys, n + added, j.tps, 0};
        if (added) ra_key_cut_apply(j.cut, ch.rotation, n, RotationSink::Put, &sink);
        else RotationSink::Put(&sink, ch.rotation, 0, n);
        if (sink.end != n + added)
            throw std::runtime_error("retroanim: the key cut inserts another number of keys than counted (" +
                                     std::to_string(added) + ")");
        ra_key_chunks_drop(j.release, ch.rotation);
    }
    if (ch.scaling_count) {
        na->mScalingKeys = new aiVectorKey[ch.scaling_count];
        na->mNumScalingKeys = (unsigned)ch.scaling_count;
        for (size_t k = 0; k < ch.scaling_count; k++)
            na->mScalingKeys[k] = aiVectorKey(Ticks(ch.scaling[k].t, j.tps), ToAi(ch.scaling[k].v));
        ra_key_chunks_drop(j.release, ch.scaling);
    }
}

// The threads for `keys` keys: the setting when given, else one per
// processor (at most 16) from 200,000 keys on (the library's own threshold).
unsigned ThreadsFor(unsigned setting, double keys)
{
    if (setting) return setting;
    if (keys < 200000) return 1;
    unsigned hw = std::thread::hardware_concurrency();
    return hw ? std::min(hw, 16u) : 1;
}

// Every job's keys; the channels are shared out one at a time.  The first
// exception (out of memory) is thrown again here once every thread is done.
void FillKeys(const std::vector<KeyJob> &jobs, unsigned threads)
{
    if (threads > jobs.size()) threads = (unsigned)jobs.size();
    if (threads <= 1) {
        for (const KeyJob &j : jobs) FillChannel(j);
        return;
    }
    std::atomic<size_t> next{0};
    std::atomic<bool> failed{false};
    std::exception_ptr first;
    std::mutex m;
    auto work = [&]() {
        try {
            for (size_t i; !failed.load(std::memory_order_relaxed) && (i = next.fetch_add(1)) < jobs.size();)
                FillChannel(jobs[i]);
        } catch (...) {
            std::lock_guard<std::mutex> lock(m);
            if (!first) first = std::current_exception();
            failed = true;
        }
    };
    std::vector<std::thread> pool;
    try {
        for (unsigned t = 1; t < threads; t++) pool.emplace_back(work);
    } catch (const std::system_error &) {
        // no more threads: those made and this one do the work
    }
    work();
    for (std::thread &t : pool) t.join();
    if (first) std::rethrow_exception(first);
}

} // namespace

void ConvertScene(const ra_scene &s, const ConvertSettings &settings, aiScene *out)
{
    if (s.node_count == 0) throw std::runtime_error("retroanim: scene has no nodes");
    if (s.node_count > std::numeric_limits<unsigned>::max() / 2)
        throw std::runtime_error("retroanim: too many nodes for Assimp");
    // nodes, in pre-order; parents come before children.  The aiScene root
    // must be an unanimated identity node: the skeleton mesh hangs on it (a
    // skinned glTF mesh ignores its node's transform; the validator warns
    // NODE_SKINNED_MESH_LOCAL_TRANSFORMS) and Assimp's FBX exporter drops the
    // root node with its transform.  A root that turns the scene (Metroid
    // Prime's and Homeworld's axis changes) gets one above it.
    aiNode *wrapper = nullptr;
    const ra_mat4 identity = ra_m4_identity();
    if (ra_m4_max_abs_diff(&s.nodes[0].transform, &identity) != 0) { // (NaN too)
        wrapper = new aiNode(WrapperName(s));
        out->mRootNode = wrapper;
        wrapper->mChildren = new aiNode *[1];
    }
    std::vector<aiNode *> nodes(s.node_count);
    std::vector<unsigned> child_count(s.node_count, 0);
    for (size_t i = 1; i < s.node_count; i++) child_count[(size_t)s.nodes[i].parent]++;
    for (size_t i = 0; i < s.node_count; i++) {
        // attached to the scene before anything else is allocated, so that a
        // bad_alloc leaves nothing the aiScene destructor does not free
        aiNode *n = new aiNode(s.nodes[i].name);
        nodes[i] = n;
        aiNode *p = i ? nodes[(size_t)s.nodes[i].parent] : wrapper;
        if (p) {
            n->mParent = p;
            p->mChildren[p->mNumChildren++] = n;
        } else {
            out->mRootNode = n;
        }
        n->mTransformation = ToAi(s.nodes[i].transform);
        if (child_count[i]) n->mChildren = new aiNode *[child_count[i]];
        n->mMetaData = ToAi(s.nodes[i].meta);
    }

    // scene metadata, with the warnings appended
    std::vector<std::pair<std::string, std::string>> extra;
    for (size_t i = 0; i < s.warning_count; i++)
        extra.emplace_back("retroanim.warning" + std::to_string(i), s.warnings[i].msg);
    out->mMetaData = ToAi(s.meta, extra);

    // animations
    if (s.animation_count) {
        out->mNumAnimations = (unsigned)s.animation_count;
        out->mAnimations = new aiAnimation *[s.animation_count]();
        std::vector<KeyJob> jobs;
        double keys = 0;
        ra_key_cutter cut;
        if (settings.max_key_angle > 0) ra_key_cutter_init(&cut, settings.max_key_angle);
        for (size_t a = 0; a < s.animation_count; a++) {
            const ra_animation &src = s.animations[a];
            aiAnimation *an = new aiAnimation();
            out->mAnimations[a] = an;
            double tps = settings.ticks_native ? src.ticks_per_second : 1.0;
            an->mName = src.name;
            an->mTicksPerSecond = tps;
            an->mDuration = src.duration * tps;
            an->mNumChannels = (unsigned)src.channel_count;
            an->mChannels = new aiNodeAnim *[src.channel_count]();
            for (size_t c = 0; c < src.channel_count; c++) {
                const ra_channel &ch = src.channels[c];
                aiNodeAnim *na = new aiNodeAnim();
                an->mChannels[c] = na;
                na->mNodeName = s.nodes[ch.node].name;
                na->mPreState = ToAi(ch.pre_state);
                na->mPostState = ToAi(ch.post_state);
                jobs.push_back({&ch, na, settings.ticks_native ? tps : 0.0, settings.max_key_angle > 0 ? &cut : nullptr,
                                settings.cut_added ? settings.cut_added[jobs.size()] : SIZE_MAX,
                                settings.release_keys});
                if (ch.position_count) ra_key_chunks_use(settings.release_keys, ch.position);
                if (ch.rotation_count) ra_key_chunks_use(settings.release_keys, ch.rotation);
                if (ch.scaling_count) ra_key_chunks_use(settings.release_keys, ch.scaling);
                keys += (double)ch.position_count + (double)ch.rotation_count + (double)ch.scaling_count;
            }
        }
        // the keys of every channel, on several threads for a large scene
        // (the chunks no channel reads go first)
        ra_key_chunks_ready(settings.release_keys);
        FillKeys(jobs, ThreadsFor(settings.threads, keys));
    }

    // cameras
    if (s.camera_count) {
        out->mNumCameras = (unsigned)s.camera_count;
        out->mCameras = new aiCamera *[s.camera_count]();
        for (size_t c = 0; c < s.camera_count; c++) {
            const ra_camera &src = s.cameras[c];
            aiCamera *cam = new aiCamera();
            out->mCameras[c] = cam;
            cam->mName = src.name;
            cam->mHorizontalFOV = (float)src.horizontal_fov;
            cam->mAspect = (float)src.aspect;
            cam->mClipPlaneNear = (float)src.clip_near;
            cam->mClipPlaneFar = (float)src.clip_far;
            cam->mPosition = ToAi(src.position);
            cam->mLookAt = ToAi(src.look_at);
            cam->mUp = ToAi(src.up);
        }
    }

    if (s.mesh_count) { // the file's own geometry: no skeleton mesh
        ConvertTextures(s, out);
        ConvertMaterials(s, out);
        ConvertMeshes(s, nodes, out);
        return;
    }
    if (!settings.skeleton_mesh) {
        out->mFlags |= AI_SCENE_FLAGS_INCOMPLETE;
        return;
    }
    // The skeleton mesh hangs on the unanimated root; cameras are kept out of
    // the skin by detaching them while the builder runs.
    struct Detached {
        aiNode *node, *parent;
        unsigned index;
    };
    std::vector<Detached> detached;
    for (size_t k = s.non_skeleton_count; k-- > 0;) {
        aiNode *n = nodes[s.non_skeleton[k]];
        aiNode *p = n->mParent;
        if (!p) continue;
        for (unsigned i = 0; i < p->mNumChildren; i++)
            if (p->mChildren[i] == n) {
                detached.push_back({n, p, i});
                for (unsigned j = i; j + 1 < p->mNumChildren; j++) p->mChildren[j] = p->mChildren[j + 1];
                p->mNumChildren--;
                break;
            }
    }
    auto reattach = [&]() {
        for (size_t k = detached.size(); k-- > 0;) {
            const Detached &d = detached[k];
            for (unsigned j = d.parent->mNumChildren; j > d.index; j--)
                d.parent->mChildren[j] = d.parent->mChildren[j - 1];
            d.parent->mChildren[d.index] = d.node;
            d.parent->mNumChildren++;
        }
    };
    try {
        Assimp::SkeletonMeshBuilder builder(out, out->mRootNode);
        (void)builder;
    } catch (...) {
        reattach(); // the scene owns them again and frees them
        throw;
    }
    reattach();
    if (wrapper) FoldWrapperBone(wrapper, nodes[0], out);
    MendDegenerateFaces(out);
    SetBindMatrices(s, out);
    if (!MeshesPlayable(out)) DropMeshes(out);
}

} // namespace retroanim
