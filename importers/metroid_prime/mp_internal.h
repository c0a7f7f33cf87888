/* Metroid Prime: helpers the ANIM, CINF, model and scene code share (not public). */
#ifndef RETROANIM_MP_INTERNAL_H
#define RETROANIM_MP_INTERNAL_H

#include "retroanim/metroid_anim.h"
#include "retroanim/ra_archive.h"

/* Only 0xFF bytes (the padding PAK extraction leaves). */
bool mp_is_padding(const uint8_t *p, size_t n);

/* A character's model as one load gathered it: the CMDL, its CSKR (optional)
 * and the textures set 0 names (rgba NULL: missing or unreadable). */
typedef struct mp_character {
    bool has_cmdl, has_cskr;
    mp_cmdl cmdl;
    mp_cskr cskr;
    const char *cmdl_path, *cskr_path; /* where they came from ("CMDL 1A2B3C4D" in a pak) */
    const char *name;                  /* the ANCS character, or NULL */
    const char *not_in_pak;            /* "CMDL 1A2B3C4D": named by the ANCS, stored in another pak */
    size_t texture_count;
    uint32_t *texture_ids;
    mp_txtr *textures;
    size_t textures_missing;
} mp_character;

/* Reads the model's textures: each id of set 0's table from load(id) (a pak
 * or the files beside the model); what cannot be found or read is a warning. */
typedef ra_status (*mp_texture_source)(void *ctx, uint32_t id, const uint8_t **data, size_t *size, uint8_t **owned,
                                       ra_error *err);
ra_status mp_character_textures(ra_document *doc, mp_character *ch, mp_texture_source load, void *ctx, ra_error *err);
/* The textures beside a loose model: %08X.TXTR in any case (ctx: an mp_beside). */
typedef struct mp_beside {
    const char *path; /* the model */
    size_t max_size;  /* max_file_size */
} mp_beside;
ra_status mp_textures_beside(void *ctx, uint32_t id, const uint8_t **data, size_t *size, uint8_t **owned,
                             ra_error *err);

/* The meshes, materials and textures of ch in doc's scene (after its nodes):
 * skinned on the skeleton's skin when ch has a CSKR and the scene has CINF
 * bones, else static on the root. */
ra_status mp_build_model(ra_document *doc, const mp_character *ch, bool native, ra_error *err);
/* The winding check: of the triangles with normals (face and stored normals not at right angles),
 * how many face against their corners' stored normals (counter-clockwise corners). */
void mp_winding(const mp_cmdl *m, size_t *tested, size_t *inverted);

/* ---- inside a pak (mp_pak.c): the archive of an item's document ---- */
typedef struct mp_pak_character {
    const char *name;
    uint32_t cmdl, cskr, cinf;
} mp_pak_character;
/* The characters of the ANCS that names item i (its first is the item's own), or 0. */
size_t mp_pak_characters(const ra_archive *ar, size_t item, const mp_pak_character **out);
/* The bytes of resource TYPE id of the pak; RA_ERR_USAGE (field "resource") when it has none. */
ra_status mp_pak_resource(ra_archive *ar, const char *type, uint32_t id, const uint8_t **data, size_t *size,
                          ra_error *err);

#endif
