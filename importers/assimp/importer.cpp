// One Assimp::BaseImporter per retroanim format, and their registration.
#include <assimp/BaseImporter.h>
#include <assimp/DefaultLogger.hpp>
#include <assimp/IOStream.hpp>
#include <assimp/IOSystem.hpp>
#include <assimp/Importer.hpp>
#include <assimp/config.h>
#include <assimp/importerdesc.h>
#include <assimp/scene.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "retroanim/assimp.hpp"
#include "retroanim/ra_document.h"

namespace retroanim {
namespace {

// Descriptors live for the whole program (Assimp keeps the pointers).
const aiImporterDesc *DescriptorFor(const ra_format *f)
{
    static std::mutex mu;
    static std::vector<std::unique_ptr<aiImporterDesc>> descs;
    static std::vector<const ra_format *> keys;
    std::lock_guard<std::mutex> lock(mu);
    for (size_t i = 0; i < keys.size(); i++)
        if (keys[i] == f) return descs[i].get();
    auto d = std::make_unique<aiImporterDesc>();
    std::memset(d.get(), 0, sizeof *d);
    d->mName = f->name;
    d->mAuthor = "retroanim";
    d->mMaintainer = "retroanim";
    d->mComments = f->detection;
    d->mFlags = aiImporterFlags_SupportBinaryFlavour;
    // Assimp asserts on an empty list; a format reached only through
    // format=ID lists its id, which no file name ends with
    d->mFileExtensions = f->extensions[0] ? f->extensions : f->id;
    keys.push_back(f);
    descs.push_back(std::move(d));
    return descs.back().get();
}

// The format forced by RETROANIM_OPTIONS (format=ID), or empty.
std::string ForcedFormat()
{
    const char *env = std::getenv("RETROANIM_OPTIONS");
    if (!env || !*env) return {};
    ra_options opt;
    ra_options_init(&opt);
    std::vector<char> store(std::strlen(env) + 1);
    if (!ra_options_parse_list(&opt, env, store.data(), store.size())) return {};
    const char *f = ra_options_get(&opt, "format");
    return f ? f : "";
}

class RetroanimImporter : public Assimp::BaseImporter {
  public:
    explicit RetroanimImporter(const ra_format *f) : format_(f) {}

    bool CanRead(const std::string &file, Assimp::IOSystem *io, bool checkSig) const override
    {
        // format=ID in the environment's options claims every file for that
        // format: the way stock tools reach data without a header (a LEGO
        // animation body) or with a foreign extension
        std::string forced = ForcedFormat();
        if (!forced.empty()) return forced == format_->id;
        if (!checkSig) return ra_format_by_extension(file.c_str()) == format_;
        if (!format_->detect || !io) return false;
        std::unique_ptr<Assimp::IOStream> s(io->Open(file, "rb"));
        if (!s) return false;
        uint8_t head[256];
        size_t n = s->Read(head, 1, sizeof head);
        return format_->detect(head, n) >= 50;
    }

    const aiImporterDesc *GetInfo() const override { return DescriptorFor(format_); }

    void SetupProperties(const Assimp::Importer *imp) override
    {
        options_.clear();
        if (const char *env = std::getenv("RETROANIM_OPTIONS")) options_ = env;
        std::string prop = imp->GetPropertyString(kOptionsProperty, "");
        if (!prop.empty()) options_ += (options_.empty() ? "" : ";") + prop;
        cinf_ = imp->GetPropertyString(kCinfProperty, "");
        no_skeleton_ = imp->GetPropertyInteger(AI_CONFIG_IMPORT_NO_SKELETON_MESHES, 0) != 0;
        // Assimp's own file system: the path names a file this process can map
        default_io_ = imp->IsDefaultIOHandler();
    }

  protected:
    void InternReadFile(const std::string &file, aiScene *scene, Assimp::IOSystem *io) override
    {
        ra_options opt;
        ra_options_init(&opt);
        std::vector<char> store(options_.size() + 1);
        if (!options_.empty() && !ra_options_parse_list(&opt, options_.c_str(), store.data(), store.size()))
            throw std::runtime_error("retroanim: malformed options '" + options_ +
                                     "' (want key=value;key=value, a backslash before ';', ',' or '\\' in a value)");
        if (!ra_options_get(&opt, "format")) ra_options_add(&opt, "format", format_->id);
        // RETROANIM_CINF is the option cinf, for the formats that declare it
        if (!cinf_.empty() && ra_option_find(format_, "cinf")) ra_options_add(&opt, "cinf", cinf_.c_str());
        // the options are checked before the file is opened (the load checks them again)
        {
            ra_error verr;
            ra_error_clear(&verr);
            const ra_format *forced = ra_format_find(ra_options_get(&opt, "format"));
            if (ra_options_validate(&opt, forced ? forced : format_, &verr) != RA_OK) {
                char buf[RA_ERROR_TEXT_MAX];
                ra_error_format(&verr, buf, sizeof buf);
                throw std::runtime_error(buf);
            }
        }
        // the size is checked before anything is allocated or read
        std::unique_ptr<Assimp::IOStream> s(io->Open(file, "rb"));
        if (!s) throw std::runtime_error(std::string(format_->id) + ": cannot open " + file);
        size_t size = s->FileSize(), max_size = ra_max_file_size(&opt);
        if (size > max_size)
            throw std::runtime_error("retroanim: the file has " + std::to_string(size) +
                                     " bytes, more than max_file_size (" + std::to_string(max_size) +
                                     ") (max_file_size)");
        // With Assimp's default file system the file is the path itself, and
        // it is mapped rather than copied (ra_file_bytes_get): a 50 MB file
        // took 30-40 ms to read, its pages faulted in one by one, and takes
        // 2-3 ms to map.  Any other IOSystem is read through.
        ra_file_bytes mapped = {};
        if (default_io_ && size > 0) {
            ra_error merr;
            ra_error_clear(&merr);
            if (ra_file_bytes_get(file.c_str(), max_size, &mapped, &merr) != RA_OK || mapped.size != size)
                ra_file_bytes_free(&mapped); // changed meanwhile: read through the stream below
        }
        std::unique_ptr<ra_file_bytes, void (*)(ra_file_bytes *)> map_guard(&mapped, ra_file_bytes_free);
        // not value-initialised: Read fills every byte (zeroing 50 MB first
        // would touch each page twice)
        std::unique_ptr<uint8_t[]> data(mapped.data ? nullptr : new uint8_t[size ? size : 1]);
        if (!mapped.data && size && s->Read(data.get(), 1, size) != size)
            throw std::runtime_error(std::string(format_->id) + ": cannot read " + file);
        s.reset();
        const uint8_t *bytes = mapped.data ? mapped.data : data.get();
        const char *ticks = ra_options_get(&opt, "ticks");

        // source_path names the file bytes read from memory came from, so
        // that companion files (a Metroid Prime CINF beside its ANIM) are
        // found; ReadFileFromMemory gives the loader only a magic name
        const char *source = ra_options_get(&opt, "source_path");
        std::string path = source && *source ? source : file;

        ra_error err;
        ra_error_clear(&err);
        ra_document *doc = nullptr;
        auto fail = [&err]() {
            char buf[RA_ERROR_TEXT_MAX];
            ra_error_format(&err, buf, sizeof buf);
            throw std::runtime_error(buf);
        };
        if (ra_document_read(bytes, size, path.c_str(), &opt, &doc, &err) != RA_OK) fail();
        std::unique_ptr<ra_document, void (*)(ra_document *)> guard(doc, ra_document_free);
        // the document keeps nothing of the file's bytes: they go before the
        // bake, so that they are not held beside the model and the baked keys
        // (where a large load peaks)
        data.reset();
        map_guard.reset();
        // the automatic density keys go straight into the aiScene's arrays
        // (ConvertSettings::max_key_angle), not into the ra_scene first
        doc->defer_key_cut = true;
        // nor the model's bulk arrays (the keys as stored, which the scene's
        // were baked from) beside the baked keys and the aiScene being
        // filled: the bake frees them as it is done with them
        doc->free_bulk_early = true;
        if (ra_document_build_scene(doc, &err) != RA_OK) fail();
        for (size_t i = 0; i < doc->scene.warning_count; i++)
            Assimp::DefaultLogger::get()->warn((std::string(format_->id) + ": " + doc->scene.warnings[i].msg).c_str());
        ConvertSettings cs;
        cs.ticks_native = ticks && std::strcmp(ticks, "native") == 0;
        cs.skeleton_mesh = !no_skeleton_;
        cs.threads = (unsigned)ra_options_get_double(&opt, "threads", 0);
        cs.max_key_angle = doc->key_cut_angle;
        cs.cut_added = doc->key_cut_added; // (counted by the load already)
        // the scene's key arrays are freed as they are copied (the document
        // goes right after): the double-precision keys and the aiScene's
        // float keys are then not all held at once
        std::unique_ptr<ra_key_chunks, void (*)(ra_key_chunks *)> keys(ra_arena_take_keys(doc->arena),
                                                                       ra_key_chunks_free);
        cs.release_keys = keys.get();
        ConvertScene(doc->scene, cs, scene);
    }

  private:
    const ra_format *format_;
    std::string options_;
    std::string cinf_;
    bool no_skeleton_ = false;
    bool default_io_ = false;
};

} // namespace

void RegisterImporters(Assimp::Importer &importer)
{
    size_t n = 0;
    const ra_format *const *f = ra_formats(&n);
    for (size_t i = 0; i < n; i++) {
        // a format that is neither detected nor named by an extension (a
        // body-only LEGO animation) is reached through the option
        // format=ID: every retroanim importer honours it, and this one's
        // CanRead says yes when RETROANIM_OPTIONS forces it
        importer.RegisterLoader(new RetroanimImporter(f[i]));
    }
}

} // namespace retroanim
