// The public library speaks in DongneCore's value types (documents, keys, ids, queries), so a program that
// imports Dongne gets them too.
@_exported import DongneCore
// Photo errors and terminal drawing come from DongneImages.
@_exported import DongneImages
// Places (시·도, 시·군·구, 읍·면·동) come from DongneRegions.
@_exported import DongneRegions
