#ifndef DONGNE_CCHAFA_SHIM_H
#define DONGNE_CCHAFA_SHIM_H
// libchafa, to draw a photo in a terminal: the calls dongne makes, with fixed arguments.
#include <chafa.h>

// Draws `width` x `height` RGBA pixels into at most `columns` x `rows` terminal cells (fewer, keeping the
// photo's proportions), as `mode` says: 0 Unicode blocks and truecolor (every terminal, tmux included),
// 1 sixels, 2 the kitty graphics protocol; with symbols, `colors` 0 draws shapes alone (no colour escape at
// all, for a terminal without colours). The escape sequences and text, NUL-terminated (free with g_free).
static inline char *dongne_chafa_draw(const unsigned char *pixels, int width, int height, int columns, int rows,
                                      int mode, int colors) {
    gint cells_wide = columns, cells_high = rows;
    chafa_calc_canvas_geometry(width, height, &cells_wide, &cells_high, 0.5f, FALSE, FALSE);
    ChafaSymbolMap *symbols = chafa_symbol_map_new();
    chafa_symbol_map_add_by_tags(symbols, CHAFA_SYMBOL_TAG_BLOCK | CHAFA_SYMBOL_TAG_BORDER | CHAFA_SYMBOL_TAG_SPACE);
    ChafaCanvasConfig *config = chafa_canvas_config_new();
    chafa_canvas_config_set_geometry(config, cells_wide, cells_high);
    chafa_canvas_config_set_symbol_map(config, symbols);
    chafa_canvas_config_set_canvas_mode(config, colors ? CHAFA_CANVAS_MODE_TRUECOLOR : CHAFA_CANVAS_MODE_FGBG);
    chafa_canvas_config_set_pixel_mode(
        config, mode == 1 ? CHAFA_PIXEL_MODE_SIXELS : mode == 2 ? CHAFA_PIXEL_MODE_KITTY : CHAFA_PIXEL_MODE_SYMBOLS);
    ChafaCanvas *canvas = chafa_canvas_new(config);
    chafa_canvas_draw_all_pixels(canvas, CHAFA_PIXEL_RGBA8_UNASSOCIATED, pixels, width, height, width * 4);
    GString *drawn = chafa_canvas_print(canvas, NULL);
    chafa_canvas_unref(canvas);
    chafa_canvas_config_unref(config);
    chafa_symbol_map_unref(symbols);
    return g_string_free(drawn, FALSE);
}

static inline void dongne_chafa_free(char *text) { g_free(text); }

#endif
