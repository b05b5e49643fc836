#ifndef DONGNE_CVIPS_SHIM_H
#define DONGNE_CVIPS_SHIM_H
// libvips, for photos. Its API is variadic (options as name/value pairs ending in NULL), which Swift cannot
// call: each call dongne makes is wrapped here in a static inline function with fixed arguments.
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <vips/vips.h>

// Fixes glibc's threshold above which a block is mapped on its own (and unmapped when freed).
static inline void dongne_fix_mmap_threshold(int bytes) { mallopt(M_MMAP_THRESHOLD, bytes); }

// Starts libvips once per process, with no operation cache (a node prepares a photo now and then; the cache
// would only hold memory) and one worker thread per operation (a node shares the machine with its user).
// A photo that must turn (most phones write upright pixels and an orientation tag) is decoded whole first:
// beyond 8 MB of pixels into a temporary file, not memory (libvips' default is 100 MB), unless the user's
// VIPS_DISC_THRESHOLD says otherwise. libvips reads it from the environment only, and setting the
// environment is safe only while one thread runs: a program calls this first thing, before any other thread.
static inline void dongne_vips_prefer_disc_for_large_images(void) { setenv("VIPS_DISC_THRESHOLD", "8m", 0); }

// libvips' warnings (a damaged file, say) would print over the REPL's screen; what matters reaches the caller as
// an error instead (see "fail_on" below).
static inline void dongne_vips_ignore_warning(const gchar *domain, GLogLevelFlags level, const gchar *message, gpointer data) {
    (void)domain; (void)level; (void)message; (void)data;
}

static inline int dongne_vips_start(void) {
    if (VIPS_INIT("dongne") != 0) return -1;
    g_log_set_handler("VIPS", G_LOG_LEVEL_WARNING, dongne_vips_ignore_warning, NULL);
    // Loaders libvips marks as unsafe for untrusted input (ImageMagick, PDF, …) are never used: a photo from a
    // peer is untrusted input.
    vips_block_untrusted_set(TRUE);
    vips_cache_set_max(0);
    vips_concurrency_set(1);
    return 0;
}

// The last error libvips recorded, cleared (a copy the caller frees with g_free).
static inline char *dongne_vips_take_error(void) {
    char *message = g_strdup(vips_error_buffer());
    vips_error_clear();
    return message;
}

// Which of the photo formats dongne takes `path` is, by its content: 1 JPEG, 2 PNG, 3 WebP, 4 HEIC/HEIF/AVIF,
// 0 anything else (another image format libvips could read included: dongne does not hand it PDFs or SVGs).
static inline int dongne_vips_format_of_loader(const char *loader) {
    if (loader == NULL) return 0;
    if (strncmp(loader, "VipsForeignLoadJpeg", 19) == 0) return 1;
    if (strncmp(loader, "VipsForeignLoadPng", 18) == 0) return 2;
    if (strncmp(loader, "VipsForeignLoadWebp", 19) == 0) return 3;
    if (strncmp(loader, "VipsForeignLoadHeif", 19) == 0) return 4;
    return 0;
}

static inline int dongne_vips_photo_format(const char *path) {
    const char *loader = vips_foreign_find_load(path);
    vips_error_clear();
    return dongne_vips_format_of_loader(loader);
}

// The same for encoded bytes in memory.
static inline int dongne_vips_buffer_format(const void *bytes, size_t length) {
    const char *loader = vips_foreign_find_load_buffer(bytes, length);
    vips_error_clear();
    return dongne_vips_format_of_loader(loader);
}

// The most pixels dongne decodes (a 200-megapixel phone photo fits): a file that declares more is refused
// before any pixel is decoded, so a small file that claims 65535 x 65535 pixels costs nothing.
#define DONGNE_MAXIMUM_PIXELS (256LL * 1000 * 1000)

static inline int dongne_vips_too_many_pixels(VipsImage *image) {
    if ((long long)vips_image_get_width(image) * vips_image_get_height(image) <= DONGNE_MAXIMUM_PIXELS) return 0;
    vips_error("dongne", "%dx%d pixels: more than dongne decodes", vips_image_get_width(image),
               vips_image_get_height(image));
    return 1;
}

// Removes every metadata item of `image` (EXIF, GPS, XMP, IPTC, ICC, comments, …): what is left is pixels and
// their geometry. `strip` alone is not enough: libvips 8.14's WebP writer keeps EXIF and XMP with it.
static inline void dongne_vips_remove_metadata(VipsImage *image) {
    gchar **fields = vips_image_get_fields(image);
    for (int i = 0; fields != NULL && fields[i] != NULL; i++) vips_image_remove(image, fields[i]);
    g_strfreev(fields);
}

// Reads the photo at `in`, turns its pixels upright by its EXIF orientation, and writes it to `out` with no
// metadata at all (no EXIF, GPS, XMP or ICC: every item removed, and "strip"), as JPEG (quality 88), PNG or WebP (`format` 1, 2, 3).
// Its pixel size after turning goes to *width and *height. An upright photo streams through in strips; one
// that must turn is read whole first (libvips keeps large ones in a temporary file, not in memory).
static inline int dongne_vips_prepare(const char *in, const char *out, int format, int *width, int *height) {
    // A truncated file is refused, not sent half grey: libvips would otherwise fill the rest and only warn.
    VipsImage *image = vips_image_new_from_file(
        in, "access", VIPS_ACCESS_SEQUENTIAL, "fail_on", VIPS_FAIL_ON_TRUNCATED, NULL);
    if (image == NULL) return -1;
    if (dongne_vips_too_many_pixels(image)) {
        g_object_unref(image);
        return -1;
    }
    int orientation = 1;
    if (vips_image_get_typeof(image, VIPS_META_ORIENTATION) != 0) {
        vips_image_get_int(image, VIPS_META_ORIENTATION, &orientation);
    }
    if (orientation > 1 && orientation <= 8) {
        g_object_unref(image);
        image = vips_image_new_from_file(in, "fail_on", VIPS_FAIL_ON_TRUNCATED, NULL);
        if (image == NULL) return -1;
    }
    VipsImage *upright = NULL;
    if (vips_autorot(image, &upright, NULL) != 0) {
        g_object_unref(image);
        return -1;
    }
    g_object_unref(image);
    VipsImage *bare = NULL;
    if (vips_copy(upright, &bare, NULL) != 0) {
        g_object_unref(upright);
        return -1;
    }
    g_object_unref(upright);
    dongne_vips_remove_metadata(bare);
    upright = bare;
    *width = vips_image_get_width(upright);
    *height = vips_image_get_height(upright);
    int result;
    switch (format) {
    case 2: result = vips_pngsave(upright, out, "strip", TRUE, NULL); break;
    case 3: result = vips_webpsave(upright, out, "strip", TRUE, "Q", 85, NULL); break;
    // No optimize_coding: its second pass keeps every coefficient of the image in memory.
    default: result = vips_jpegsave(upright, out, "strip", TRUE, "Q", 88, NULL); break;
    }
    g_object_unref(upright);
    return result;
}

// A JPEG thumbnail of the photo at `path` that fits `side` pixels, at `quality`, with no metadata: malloc'd
// bytes in *bytes (free with g_free) and their count in *length.
static inline int dongne_vips_thumbnail(const char *path, int side, int quality, void **bytes, size_t *length) {
    VipsImage *thumbnail = NULL;
    if (vips_thumbnail(path, &thumbnail, side, "height", side, NULL) != 0) return -1;
    int result = vips_jpegsave_buffer(thumbnail, bytes, length, "Q", quality, "strip", TRUE, NULL);
    g_object_unref(thumbnail);
    return result;
}

// The photo at `path` (or encoded in memory, when `path` is NULL), shrunk to fit `width` x `height` pixels,
// as 8-bit sRGB with alpha: malloc'd pixels in *pixels (free with g_free), their size in *out_width and
// *out_height. For drawing in a terminal.
static inline int dongne_vips_rgba(const char *path, const void *encoded, size_t encoded_length, int width,
                                   int height, void **pixels, int *out_width, int *out_height) {
    int format = path != NULL ? dongne_vips_photo_format(path) : dongne_vips_buffer_format(encoded, encoded_length);
    if (format == 0) {
        vips_error("dongne", "not a JPEG, PNG, WebP or HEIC image");
        return -1;
    }
    VipsImage *header = path != NULL ? vips_image_new_from_file(path, NULL)
                                     : vips_image_new_from_buffer(encoded, encoded_length, "", NULL);
    if (header == NULL) return -1;
    int refused = dongne_vips_too_many_pixels(header);
    g_object_unref(header);
    if (refused) return -1;
    VipsImage *thumbnail = NULL;
    int result = path != NULL
        ? vips_thumbnail(path, &thumbnail, width, "height", height, NULL)
        : vips_thumbnail_buffer((void *)encoded, encoded_length, &thumbnail, width, "height", height, NULL);
    if (result != 0) return -1;
    VipsImage *srgb = NULL;
    if (vips_colourspace(thumbnail, &srgb, VIPS_INTERPRETATION_sRGB, NULL) != 0) {
        g_object_unref(thumbnail);
        return -1;
    }
    g_object_unref(thumbnail);
    VipsImage *rgba = srgb;
    if (vips_image_get_bands(srgb) == 3) {
        if (vips_addalpha(srgb, &rgba, NULL) != 0) {
            g_object_unref(srgb);
            return -1;
        }
        g_object_unref(srgb);
    }
    VipsImage *bytes = NULL;
    if (vips_cast_uchar(rgba, &bytes, NULL) != 0) {
        g_object_unref(rgba);
        return -1;
    }
    g_object_unref(rgba);
    size_t size = 0;
    *pixels = vips_image_write_to_memory(bytes, &size);
    *out_width = vips_image_get_width(bytes);
    *out_height = vips_image_get_height(bytes);
    g_object_unref(bytes);
    return *pixels == NULL ? -1 : 0;
}

static inline void dongne_vips_free(void *pointer) { g_free(pointer); }

#endif
