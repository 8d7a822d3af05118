package sim

import (
	"encoding/binary"
	"math"
)

// synthWAV renders a valid PCM WAV recording for a voice conversation: 8 kHz
// mono 16-bit, a short tone per turn (a different pitch for each side) so
// the file's length follows the conversation. The pitch is derived from
// the conversation id, so the same conversation always yields the same bytes.
func synthWAV(c *Conversation) []byte {
	turns := max(len(c.snapshot().turns), 1)
	samples := int(float64(turns) * audioSecondsPerTurn * audioSampleRate)
	samples = min(samples, 30*audioSampleRate) // cap at 30 s
	dataLen := samples * 2
	b := make([]byte, 44+dataLen)
	copy(b[0:], "RIFF")
	binary.LittleEndian.PutUint32(b[4:], uint32(36+dataLen))
	copy(b[8:], "WAVE")
	copy(b[12:], "fmt ")
	binary.LittleEndian.PutUint32(b[16:], 16) // PCM header size
	binary.LittleEndian.PutUint16(b[20:], 1)  // PCM
	binary.LittleEndian.PutUint16(b[22:], 1)  // mono
	binary.LittleEndian.PutUint32(b[24:], audioSampleRate)
	binary.LittleEndian.PutUint32(b[28:], audioSampleRate*2) // byte rate
	binary.LittleEndian.PutUint16(b[32:], 2)                 // block align
	binary.LittleEndian.PutUint16(b[34:], 16)                // bits per sample
	copy(b[36:], "data")
	binary.LittleEndian.PutUint32(b[40:], uint32(dataLen))
	base := 300 + float64(hashString(c.ID)%200)
	perTurn := int(audioSecondsPerTurn * audioSampleRate)
	for i := 0; i < samples; i++ {
		freq := base
		if (i/perTurn)%2 == 1 {
			freq *= 1.5
		}
		v := int16(8000 * math.Sin(2*math.Pi*freq*float64(i)/audioSampleRate))
		binary.LittleEndian.PutUint16(b[44+2*i:], uint16(v))
	}
	return b
}
