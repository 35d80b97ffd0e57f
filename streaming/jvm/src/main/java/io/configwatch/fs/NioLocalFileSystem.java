package io.configwatch.fs;

import org.apache.hadoop.fs.LocalFileSystem;

/**
 * The {@code file:} {@link org.apache.hadoop.fs.FileSystem} the job's session uses
 * ({@code spark.hadoop.fs.file.impl}): Hadoop's checksummed local file system over
 * {@link NioRawLocalFileSystem}.
 */
public class NioLocalFileSystem extends LocalFileSystem {
  public NioLocalFileSystem() {
    super(new NioRawLocalFileSystem());
  }
}
