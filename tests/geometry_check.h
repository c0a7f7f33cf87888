// Geometry read back through Assimp (test_gltf.cpp, test_fbx.cpp,
// test_assimp.cpp): every triangle of the scene, as world-space corner
// positions and texture coordinates at rest, must come back once, whatever
// the reader does with vertices (glTF keeps them, FBX readers split them per
// corner) and with mesh names; and the embedded textures must all be there.
#ifndef RETROANIM_GEOMETRY_CHECK_H
#define RETROANIM_GEOMETRY_CHECK_H

#include <assimp/scene.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "retroanim/ra_document.h"

// one triangle: 3 corners x (x, y, z, u, v); u = v = -1 without coordinates
using GeoTri = std::array<double, 15>;

static inline void GeoSort(std::vector<GeoTri> &t)
{
    auto key = [](const GeoTri &a) {
        GeoTri k;
        for (size_t i = 0; i < a.size(); i++) k[i] = std::round(a[i] * 1e3);
        return k;
    };
    std::sort(t.begin(), t.end(), [&](const GeoTri &a, const GeoTri &b) { return key(a) < key(b); });
}

static inline void GeoCollect(const aiScene *sc, const aiNode *n, const aiMatrix4x4 &parent, std::vector<GeoTri> &out)
{
    aiMatrix4x4 w = parent * n->mTransformation;
    for (unsigned k = 0; k < n->mNumMeshes; k++) {
        const aiMesh *m = sc->mMeshes[n->mMeshes[k]];
        for (unsigned f = 0; f < m->mNumFaces; f++) {
            const aiFace &face = m->mFaces[f];
            if (face.mNumIndices != 3) continue;
            GeoTri t;
            for (size_t c = 0; c < 3; c++) {
                unsigned v = face.mIndices[c];
                aiVector3D p = w * m->mVertices[v];
                t[5 * c] = p.x, t[5 * c + 1] = p.y, t[5 * c + 2] = p.z;
                bool uv = m->mTextureCoords[0] != nullptr;
                t[5 * c + 3] = uv ? m->mTextureCoords[0][v].x : -1;
                t[5 * c + 4] = uv ? 1 - m->mTextureCoords[0][v].y : -1; // back to v down
            }
            out.push_back(t);
        }
    }
    for (unsigned i = 0; i < n->mNumChildren; i++) GeoCollect(sc, n->mChildren[i], w, out);
}

// (CHECK comes from the includer.)  Skinned meshes hold their vertices at
// rest in the scene's frame (retroanim.h), the root's transform included.
static inline void CheckGeometry(const ra_scene &s, const aiScene *sc, const char *nm, bool textures)
{
    std::vector<ra_mat4> world(s.node_count);
    for (size_t i = 0; i < s.node_count; i++)
        world[i] = i ? ra_m4_mul(&world[(size_t)s.nodes[i].parent], &s.nodes[i].transform) : s.nodes[0].transform;
    std::vector<GeoTri> want, got;
    for (size_t i = 0; i < s.mesh_count; i++) {
        const ra_mesh &m = s.meshes[i];
        for (size_t f = 0; f < m.triangle_count; f++) {
            GeoTri t;
            for (size_t c = 0; c < 3; c++) {
                uint32_t v = m.indices[3 * f + c];
                ra_vec3 p = ra_v3(m.positions[3 * v], m.positions[3 * v + 1], m.positions[3 * v + 2]);
                if (m.skin < 0) p = ra_m4_apply_point(&world[m.node], p); /* skinned: already in the scene's frame */
                t[5 * c] = p.x, t[5 * c + 1] = p.y, t[5 * c + 2] = p.z;
                t[5 * c + 3] = m.uvs ? m.uvs[2 * v] : -1;
                t[5 * c + 4] = m.uvs ? m.uvs[2 * v + 1] : -1;
            }
            want.push_back(t);
        }
    }
    GeoCollect(sc, sc->mRootNode, aiMatrix4x4(), got);
    if (!s.mesh_count) {
        // no geometry: whatever the reader adds is not triangles of ours
        return;
    }
    CHECK(got.size() == want.size(), "%s: %zu triangles read back, %zu in the scene", nm, got.size(), want.size());
    if (got.size() != want.size()) return;
    GeoSort(want);
    GeoSort(got);
    double worst = 0;
    for (size_t i = 0; i < want.size(); i++)
        for (size_t k = 0; k < 15; k++) worst = std::max(worst, std::fabs(want[i][k] - got[i][k]));
    CHECK(worst <= 1e-4, "%s: triangles (world positions, texture coordinates) differ by %g", nm, worst);
    if (textures)
        CHECK(sc->mNumTextures == s.texture_count, "%s: %u embedded textures, %zu in the scene", nm, sc->mNumTextures,
              s.texture_count);
}

#endif
