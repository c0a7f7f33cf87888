// retroanim — the Assimp side: importers for every retroanim format and the
// one converter from ra_scene to aiScene they all share.
//
//   Assimp::Importer imp;
//   retroanim::RegisterImporters(imp);          // the Importer owns them
//   const aiScene *s = imp.ReadFile("walk.ani", aiProcess_ValidateDataStructure);
//
// Importer properties (Importer::SetPropertyString / SetPropertyInteger):
//   "RETROANIM_OPTIONS"  "key=value;key=value" — retroanim options (docs/options.md;
//                        a backslash escapes ; , and \\ in a value); an unknown
//                        key or a bad value fails the import with a message,
//                        e.g. "coords=native;ticks=native"
//   "RETROANIM_CINF"     path of the Metroid Prime skeleton for an ANIM (the
//                        option cinf=PATH; "none" disables the search)
//   AI_CONFIG_IMPORT_NO_SKELETON_MESHES — no skeleton mesh; the scene is then
//                        flagged AI_SCENE_FLAGS_INCOMPLETE
// The environment variable RETROANIM_OPTIONS is read too (before the
// property), so that stock tools can pass options.
#ifndef RETROANIM_ASSIMP_HPP
#define RETROANIM_ASSIMP_HPP

#include <string>

struct aiScene;
namespace Assimp {
class Importer;
}

extern "C" {
struct ra_scene;
struct ra_key_chunks;
}

namespace retroanim {

constexpr const char *kOptionsProperty = "RETROANIM_OPTIONS";
constexpr const char *kCinfProperty = "RETROANIM_CINF";

// Registers one importer per retroanim format on `importer` (which takes
// ownership of them, as Assimp does for every registered loader).
void RegisterImporters(Assimp::Importer &importer);

struct ConvertSettings {
    bool ticks_native = false; // false: 1 tick = 1 second (mTicksPerSecond = 1)
    bool skeleton_mesh = true; // false: no mesh, AI_SCENE_FLAGS_INCOMPLETE set
    unsigned threads = 0;      // threads filling the key arrays; 0: one per processor for 200,000 keys or more
    // > 0: two rotation keys more than this many radians of rotation apart
    // get keys inserted on their slerp path while they are copied (slerp
    // playback unchanged), as the automatic key density does; the importers
    // pass that density here instead of inserting it into the ra_scene first
    double max_key_angle = 0;
    // with max_key_angle: the keys its cut inserts into each channel (the
    // scene's animations' channels one after another), as the load counted
    // them at that angle (ra_document's key_cut_added); nullptr: counted
    // here.  A channel's count of 0 copies its keys without a cut; any other
    // count the cut's keys do not fill exactly throws std::runtime_error.
    const size_t *cut_added = nullptr;
    // the importers: the document's key chunks (taken from its arena),
    // freed as the keys are copied so that the scene's keys and the
    // aiScene's are not all held at once; the ra_scene's key arrays are
    // gone afterwards.  The caller frees what is left (ra_key_chunks_free).
    ra_key_chunks *release_keys = nullptr;
};

// Fills an (empty, freshly constructed) aiScene from a retroanim scene.
// Throws std::runtime_error on failure.
void ConvertScene(const ra_scene &src, const ConvertSettings &settings, aiScene *out);

} // namespace retroanim

#endif
